// A Network as a sequence of layers (kernels/model/layers.hpp) over one flat parameter buffer, and the model
// zoo (architectures of peers/anchors_common.py make_model). Parameter blocks follow layer order, weight then
// bias. The network owns one activation and one gradient buffer per non-view layer, grown to the largest batch
// seen and reused; a view (Flatten) aliases its input's buffers. Backward stops at the first trainable layer,
// which gets no data gradient (an empty dinp span).
#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.hpp"
#include "kernels/model/layers.hpp"
#include "kernels/rng.hpp"

namespace dts::model {
namespace {

using detail::Dims;
using detail::Layer;

class Sequential final : public Network {
 public:
  Sequential(std::string name, Backend b, Dims in, int classes, std::vector<std::unique_ptr<Layer>> layers)
      : name_(std::move(name)), in_(in), classes_(classes), layers_(std::move(layers)), loss_(b, classes) {
    const int L = static_cast<int>(layers_.size());
    first_trainable_ = L;
    for (int i = 0; i < L; ++i) {
      offset_.push_back(num_params_);
      num_params_ += layers_[i]->num_params();
      if (layers_[i]->num_params() > 0 && first_trainable_ == L) first_trainable_ = i;
      const int prev = i == 0 ? -1 : owner_[i - 1];
      owner_.push_back(layers_[i]->is_view() ? prev : i);
    }
    DTS_ASSERT(L > 0 && owner_.back() >= 0 && layers_.back()->out().size() == static_cast<std::size_t>(classes),
               name_ + ": the last layer must produce the logits");
    act_.resize(layers_.size());
    dact_.resize(layers_.size());
  }

  const std::string& name() const override { return name_; }
  std::size_t num_params() const override { return num_params_; }

  std::vector<ParamBlock> param_blocks() const override {
    std::vector<ParamBlock> blocks;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto& l = *layers_[i];
      if (l.num_params() == 0) continue;
      blocks.push_back({l.name() + ".weight", offset_[i], l.weight_size()});
      blocks.push_back({l.name() + ".bias", offset_[i] + l.weight_size(), l.bias_size()});
    }
    return blocks;
  }

  std::vector<LayerCost> cost() const override {
    std::vector<LayerCost> costs;
    const int L = static_cast<int>(layers_.size());
    for (int i = 0; i < L; ++i) costs.push_back(layers_[i]->cost(i > first_trainable_, i >= first_trainable_));
    costs.push_back(loss_.cost());
    return costs;
  }

  // Weight ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform, a = sqrt 5), bias the same, block by block.
  void init_params(std::span<float> params, std::uint64_t seed) const override {
    DTS_ASSERT(params.size() == num_params_, name_ + ": init_params: wrong buffer size");
    Rng rng(seed, 0, "init");
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      const auto& l = *layers_[i];
      const double bound = 1.0 / std::sqrt(static_cast<double>(l.fan_in()));
      for (float& p : params.subspan(offset_[i], l.num_params())) p = static_cast<float>(rng.uniform(-bound, bound));
    }
  }

  float forward_backward(std::span<const float> params, std::span<float> grads, std::span<const float> x,
                         std::span<const std::int32_t> y, int N, std::uint64_t dropout_seed) override {
    DTS_ASSERT(N > 0 && params.size() == num_params_ && grads.size() == num_params_, name_ + ": bad buffers");
    DTS_ASSERT(x.size() == static_cast<std::size_t>(N) * in_.size() && y.size() == static_cast<std::size_t>(N),
               name_ + ": x must be (N, c, h, w) and y (N)");
    grow(N, /*train=*/true);
    forward(params, x, N, true, dropout_seed);
    const float loss = loss_.forward(out_of(static_cast<int>(layers_.size()) - 1, N), y, N);
    loss_.backward(dout_of(static_cast<int>(layers_.size()) - 1, N), y, N);
    for (int i = static_cast<int>(layers_.size()) - 1; i >= first_trainable_; --i) {
      auto& l = *layers_[i];
      if (l.is_view()) continue;  // its gradient buffer is its input's
      const std::span<float> dinp = i > first_trainable_ ? dout_of(i - 1, N) : std::span<float>{};
      l.backward(dinp, grads.subspan(offset_[i], l.num_params()), dout_of(i, N), in_of(i, x, N),
                 params.subspan(offset_[i], l.num_params()), N);
    }
    return loss;
  }

  EvalResult evaluate(std::span<const float> params, const data::Dataset& ds, int batch) override {
    if (ds.c != in_.c || ds.h != in_.h || ds.w != in_.w || ds.classes > classes_)
      throw InputError(ds.name, "data set of shape (" + std::to_string(ds.c) + ", " + std::to_string(ds.h) + ", " +
                                    std::to_string(ds.w) + ") with " + std::to_string(ds.classes) +
                                    " classes does not fit network " + name_);
    DTS_ASSERT(batch > 0 && params.size() == num_params_, name_ + ": evaluate: bad batch or buffer");
    EvalResult r;
    double loss_sum = 0;
    for (int start = 0; start < ds.n; start += batch) {
      const int N = std::min(batch, ds.n - start);
      const auto x = std::span<const float>(ds.x).subspan(start * ds.sample_size(), N * ds.sample_size());
      const auto y = std::span<const std::int32_t>(ds.y).subspan(static_cast<std::size_t>(start), N);
      grow(N, /*train=*/false);
      forward(params, x, N, false, 0);
      const auto logits = out_of(static_cast<int>(layers_.size()) - 1, N);  // (N, classes)
      loss_sum += double(loss_.forward(logits, y, N)) * N;
      for (int n = 0; n < N; ++n) {
        const auto row = logits.subspan(static_cast<std::size_t>(n) * classes_, classes_);
        r.correct += std::max_element(row.begin(), row.end()) - row.begin() == y[n];
      }
      r.total += N;
    }
    r.mean_loss = r.total ? loss_sum / static_cast<double>(r.total) : 0.0;
    return r;
  }

 private:
  void forward(std::span<const float> params, std::span<const float> x, int N, bool train, std::uint64_t seed) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      auto& l = *layers_[i];
      if (l.is_view()) continue;
      const detail::FwdCtx ctx{train, seed, i};
      l.forward(out_of(static_cast<int>(i), N), in_of(static_cast<int>(i), x, N),
                params.subspan(offset_[i], l.num_params()), N, ctx);
    }
  }
  // Activation buffers for batch N (and gradient buffers when training); they only grow.
  void grow(int N, bool train) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      if (layers_[i]->is_view()) continue;
      const std::size_t n = static_cast<std::size_t>(N) * layers_[i]->out().size();
      if (act_[i].size() < n) act_[i].resize(n);
      if (train && dact_[i].size() < n) dact_[i].resize(n);
    }
  }
  // Output (N, out) of layer i and its gradient: the buffers of the layer that owns that memory.
  std::span<float> out_of(int i, int N) { return {act_[owner_[i]].data(), size_of(i, N)}; }
  std::span<float> dout_of(int i, int N) { return {dact_[owner_[i]].data(), size_of(i, N)}; }
  // Input (N, in) of layer i: the network input x for the first layers, else the previous layer's output.
  std::span<const float> in_of(int i, std::span<const float> x, int N) {
    return (i == 0 || owner_[i - 1] < 0) ? x : std::span<const float>(out_of(i - 1, N));
  }
  std::size_t size_of(int i, int N) const { return static_cast<std::size_t>(N) * layers_[i]->out().size(); }

  std::string name_;
  Dims in_;
  int classes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  detail::SoftmaxXentLoss loss_;
  std::vector<std::size_t> offset_;  // per layer: offset of its weight in the parameter buffer
  std::vector<int> owner_;           // per layer: the layer whose buffer holds its output (-1: the input x)
  std::size_t num_params_ = 0;
  int first_trainable_ = 0;               // backward runs for layers >= this one; it gets no dinp
  std::vector<std::vector<float>> act_;   // per non-view layer: output (N, out)
  std::vector<std::vector<float>> dact_;  // per non-view layer: gradient of the loss w.r.t. its output
};

// Appends layers, tracking the running shape and numbering names per kind ("conv1", "relu2", ...).
class Builder {
 public:
  Builder(Backend b, Dims in) : b_(b), cur_(in) {}
  Builder& linear(int out) { return add(detail::make_linear(b_, next("fc"), cur_, out)); }
  Builder& conv(int oc, int k, int pad) { return add(detail::make_conv(b_, next("conv"), cur_, oc, k, pad)); }
  Builder& maxpool(int k, int s, bool ceil) { return add(detail::make_pool(b_, next("pool"), cur_, true, k, s, ceil)); }
  Builder& avgpool(int k, int s, bool ceil) {
    return add(detail::make_pool(b_, next("pool"), cur_, false, k, s, ceil));
  }
  Builder& relu() { return add(detail::make_relu(b_, next("relu"), cur_)); }
  Builder& dropout(float p) { return add(detail::make_dropout(b_, next("dropout"), cur_, p)); }
  Builder& flatten() { return add(detail::make_flatten(next("flatten"), cur_)); }
  std::vector<std::unique_ptr<Layer>> take() { return std::move(layers_); }

 private:
  Builder& add(std::unique_ptr<Layer> l) {
    cur_ = l->out();
    layers_.push_back(std::move(l));
    return *this;
  }
  std::string next(const std::string& kind) { return kind + std::to_string(++count_[kind]); }
  Backend b_;
  Dims cur_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::map<std::string, int> count_;
};

std::vector<std::unique_ptr<Layer>> build(const std::string& name, Builder& b, int classes) {
  if (name == "mlp") {  // 784-1024-1024-1024-10
    return b.flatten().linear(1024).relu().linear(1024).relu().linear(1024).relu().linear(classes).take();
  }
  if (name == "mlp_dropout") {  // the same with dropout 0.2 on the input, 0.5 after each hidden ReLU
    b.flatten().dropout(0.2f);
    for (int i = 0; i < 3; ++i) b.linear(1024).relu().dropout(0.5f);
    return b.linear(classes).take();
  }
  if (name == "lenet") {  // Caffe examples/mnist/lenet_train_test.prototxt
    return b.conv(20, 5, 0)
        .maxpool(2, 2, false)
        .conv(50, 5, 0)
        .maxpool(2, 2, false)
        .flatten()
        .linear(500)
        .relu()
        .linear(classes)
        .take();
  }
  if (name == "cifar10_quick") {  // Caffe examples/cifar10/cifar10_quick_train_test.prototxt (ceil-mode pools)
    return b.conv(32, 5, 2)
        .maxpool(3, 2, true)
        .relu()
        .conv(32, 5, 2)
        .relu()
        .avgpool(3, 2, true)
        .conv(64, 5, 2)
        .relu()
        .avgpool(3, 2, true)
        .flatten()
        .linear(64)
        .linear(classes)
        .take();
  }
  if (name == "logreg") return b.flatten().linear(classes).take();
  std::string known;
  for (const auto& n : network_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("", "unknown model '" + echo(name) + "' (known: " + known + ")");
}

}  // namespace

std::vector<std::string> network_names() { return {"mlp", "mlp_dropout", "lenet", "cifar10_quick", "logreg"}; }

std::unique_ptr<Network> make_network(const std::string& name, Backend backend, int c, int h, int w, int classes) {
  if (c < 1 || h < 1 || w < 1 || classes < 1)
    throw InputError("", "model '" + name + "': bad input shape (" + std::to_string(c) + ", " + std::to_string(h) +
                             ", " + std::to_string(w) + ") or class count " + std::to_string(classes));
#ifndef DTS_WITH_ONEDNN
  if (backend == Backend::kOnednn) throw InputError("", "the oneDNN backend is not built (DTS_WITH_ONEDNN=OFF)");
#endif
  Builder b(backend, Dims{c, h, w});
  auto layers = build(name, b, classes);
  return std::make_unique<Sequential>(name, backend, Dims{c, h, w}, classes, std::move(layers));
}

}  // namespace dts::model
