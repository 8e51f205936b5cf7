// CostBuilder: shapes, parameter blocks and per-layer costs of a model described layer by layer.
#include "kernels/model/cost_builder.hpp"

#include "core/errors.hpp"
#include "kernels/model/layer_cost.hpp"
#include "kernels/ref/shapes.hpp"

namespace dts::model {
namespace {

constexpr double kF = sizeof(float);

std::string shape_text(Shape s) {
  std::string t(1, '(');  // appended piecewise: GCC 12's -Wrestrict misfires on "(" + std::to_string(..)
  for (const int d : {s.c, s.h, s.w}) t.append(t.size() > 1 ? ", " : "").append(std::to_string(d));
  return t.append(")");
}

}  // namespace

CostBuilder::CostBuilder(std::string name, Shape input) : cur_(input) {
  p_.name = std::move(name);
  p_.input = input;
  if (input.c < 1 || input.h < 1 || input.w < 1)
    throw InputError("", p_.name + ": bad input shape " + shape_text(input));
}

CostBuilder& CostBuilder::at(Shape s) {
  cur_ = s;
  return *this;
}

CostBuilder& CostBuilder::push(LayerCost c, Shape out) {
  p_.layers.push_back(std::move(c));
  cur_ = out;
  return *this;
}

void CostBuilder::params(const std::string& layer, std::size_t weights, std::size_t biases) {
  p_.param_blocks.push_back({layer + ".weight", p_.num_params, weights});
  p_.num_params += weights;
  if (biases > 0) {
    p_.param_blocks.push_back({layer + ".bias", p_.num_params, biases});
    p_.num_params += biases;
  }
}

CostBuilder& CostBuilder::conv(int oc, int k, int stride, int pad, int groups, bool bias) {
  const std::string name = next("conv");
  if (stride < 1) throw InputError("", p_.name + ": " + name + ": stride must be positive");
  const int oh = (cur_.h + 2 * pad - k) / stride + 1, ow = (cur_.w + 2 * pad - k) / stride + 1;
  if (cur_.h + 2 * pad < k || cur_.w + 2 * pad < k || oh < 1 || ow < 1)
    throw InputError("", p_.name + ": " + name + ": input " + shape_text(cur_) + " is smaller than its " +
                             std::to_string(k) + "x" + std::to_string(k) + " kernel");
  if (groups < 1 || cur_.c % groups != 0 || oc % groups != 0)
    throw InputError("", p_.name + ": " + name + ": channels not divisible by " + std::to_string(groups) + " groups");
  const Shape out{oc, oh, ow};
  const std::size_t weights = std::size_t(oc) * (cur_.c / groups) * k * k, biases = bias ? std::size_t(oc) : 0;
  const double mac = out.size() * (cur_.c / groups) * k * k;
  p_.fwd_macs_per_sample += mac;
  params(name, weights, biases);
  LayerCost c = cost::gemm(name, mac, cur_.size(), out.size(), double(weights + biases), trainable_seen_, true);
  if (!bias) {  // no bias add, no bias gradient
    c.fwd_flops_per_sample -= out.size();
    c.bwd_flops_per_sample -= out.size();
    c.fwd_kernels -= 1;
    c.bwd_kernels -= 1;
  }
  trainable_seen_ = true;
  return push(std::move(c), out);
}

CostBuilder& CostBuilder::fc(int out) {
  const std::string name = next("fc");
  const double in = cur_.size();
  const auto weights = static_cast<std::size_t>(in) * out;
  p_.fwd_macs_per_sample += in * out;
  params(name, weights, std::size_t(out));
  LayerCost c = cost::gemm(name, in * out, in, out, double(weights + out), trainable_seen_, true);
  trainable_seen_ = true;
  return push(std::move(c), Shape{out, 1, 1});
}

CostBuilder& CostBuilder::pool(bool max, int k, int stride, int pad, bool ceil) {
  const std::string name = next("pool");
  kernels::PoolShape s;
  s.C = cur_.c, s.H = cur_.h, s.W = cur_.w, s.K = k, s.stride = stride, s.pad = pad, s.ceil_mode = ceil;
  if (cur_.h + 2 * pad < k || cur_.w + 2 * pad < k || stride < 1)
    throw InputError("", p_.name + ": " + name + ": input " + shape_text(cur_) + " is smaller than its " +
                             std::to_string(k) + "x" + std::to_string(k) + " window");
  const Shape out{cur_.c, s.OH(), s.OW()};
  return push(cost::pool(name, cur_.size(), out.size(), double(k) * k, max, bwd()), out);
}

CostBuilder& CostBuilder::maxpool(int k, int stride, int pad, bool ceil) { return pool(true, k, stride, pad, ceil); }
CostBuilder& CostBuilder::avgpool(int k, int stride, int pad, bool ceil) { return pool(false, k, stride, pad, ceil); }

CostBuilder& CostBuilder::global_avgpool() {
  const Shape out{cur_.c, 1, 1};
  return push(cost::pool(next("pool"), cur_.size(), out.size(), double(cur_.h) * cur_.w, false, bwd()), out);
}

CostBuilder& CostBuilder::relu() { return push(cost::elementwise(next("relu"), cur_.size(), 2, 3, bwd()), cur_); }
CostBuilder& CostBuilder::dropout() {
  return push(cost::elementwise(next("dropout"), cur_.size(), 3, 3, bwd(), 1, 1, 2, 1), cur_);
}
CostBuilder& CostBuilder::flatten() {
  return push(LayerCost{next("flatten"), 0, 0, 0, 0, 0}, Shape{int(cur_.size()), 1, 1});
}

CostBuilder& CostBuilder::bn() {
  const std::string name = next("bn");
  params(name, std::size_t(cur_.c), std::size_t(cur_.c));
  LayerCost c = cost::elementwise(name, cur_.size(), 3, 5, bwd(), 4, 8);
  c.param_bytes = kF * 2 * cur_.c;
  trainable_seen_ = true;
  return push(std::move(c), cur_);
}

CostBuilder& CostBuilder::lrn(int size) {
  return push(cost::elementwise(next("lrn"), cur_.size(), 3, 5, bwd(), 2.0 * size + 3, 4.0 * size + 6), cur_);
}

CostBuilder& CostBuilder::concat(const std::vector<Shape>& branches) {
  DTS_ASSERT(!branches.empty(), p_.name + ": concat of no branches");
  Shape out{0, branches.front().h, branches.front().w};
  for (const Shape& b : branches) {
    DTS_ASSERT(b.h == out.h && b.w == out.w, p_.name + ": concat of branches of different sizes");
    out.c += b.c;
  }
  const auto n = static_cast<double>(branches.size());  // a copy kernel per branch each way
  return push(cost::elementwise(next("concat"), out.size(), 2, 2, bwd(), 0, 0, n, n), out);
}

CostBuilder& CostBuilder::add(Shape other) {
  DTS_ASSERT(other.c == cur_.c && other.h == cur_.h && other.w == cur_.w,
             p_.name + ": residual add of different shapes");
  return push(cost::elementwise(next("add"), cur_.size(), 3, 3, bwd(), 1, 1, 1, 2), cur_);  // a copy per input back
}

CostBuilder& CostBuilder::loss(const std::string& name) { return push(cost::softmax_xent(name, cur_.size()), cur_); }

ModelProfile CostBuilder::take(int outputs) {
  p_.outputs = outputs;
  return std::move(p_);
}

}  // namespace dts::model
