// Elementwise layers of kernels/model/layers.hpp (ReLU, inverted dropout, Flatten) and the softmax
// cross-entropy loss, on ref:: or onednn:: kernels. Dropout draws its mask with ref::dropout_mask for both
// backends (stream = the layer's index), so ref and oneDNN networks drop the same units; in evaluation it
// is the identity. Flatten is a view: the network aliases its output to its input and never calls it.
#include <algorithm>
#include <vector>

#include "core/errors.hpp"
#include "kernels/model/layer_cost.hpp"
#include "kernels/model/layers.hpp"
#include "kernels/ref/kernels.hpp"
#ifdef DTS_WITH_ONEDNN
#include "kernels/onednn/layers.hpp"
#endif

namespace dts::model::detail {

void no_onednn() { assert_fail("DTS_WITH_ONEDNN", __FILE__, __LINE__, "dtsim was built without oneDNN"); }

namespace {

namespace ref = dts::kernels::ref;
#ifdef DTS_WITH_ONEDNN
namespace dnn = dts::kernels::onednn;
#endif

// out = max(inp, 0); dinp = dout * (inp > 0). inp, out, dout, dinp (N, size).
class Relu final : public Layer {
 public:
  Relu(Backend b, std::string name, Dims in) : Layer(std::move(name), in, in), b_(b) {}
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float>, int N,
               const FwdCtx&) override {
    if (b_ == Backend::kRef) return ref::relu_forward<float>(out, inp);
#ifdef DTS_WITH_ONEDNN
    kernel(N).forward(out, inp);
#else
    (void)N;
    no_onednn();
#endif
  }
  void backward(std::span<float> dinp, std::span<float>, std::span<const float> dout, std::span<const float> inp,
                std::span<const float>, int N) override {
    if (dinp.empty()) return;
    if (b_ == Backend::kRef) return ref::relu_backward<float>(dinp, dout, inp);
#ifdef DTS_WITH_ONEDNN
    kernel(N).backward(dinp, dout, inp);
#else
    (void)N;
    no_onednn();
#endif
  }
  // fwd reads inp, writes out; bwd reads dout and inp, writes dinp.
  LayerCost cost(bool, bool bwd) const override { return cost::elementwise(name(), double(in().size()), 2, 3, bwd); }

 private:
#ifdef DTS_WITH_ONEDNN
  dnn::Relu& kernel(int N) {
    return cache_.get(N, [&] { return std::make_unique<dnn::Relu>(static_cast<std::size_t>(N) * in().size()); });
  }
  PerBatch<dnn::Relu> cache_;
#endif
  Backend b_;
};

// Inverted dropout: out = inp * mask, mask in {0, 1/(1-p)} drawn per forward; identity when not training.
class Dropout final : public Layer {
 public:
  Dropout(Backend b, std::string name, Dims in, float p) : Layer(std::move(name), in, in), b_(b), p_(p) {}
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float>, int N,
               const FwdCtx& ctx) override {
    if (!ctx.train) {
      std::copy(inp.begin(), inp.end(), out.begin());
      return;
    }
    mask_.resize(inp.size());  // mask (N, size)
    ref::dropout_mask(mask_, p_, ctx.dropout_seed, ctx.stream);
    if (b_ == Backend::kRef) return ref::dropout_forward<float>(out, inp, mask_);
#ifdef DTS_WITH_ONEDNN
    kernel(N).forward(out, inp, mask_);
#else
    (void)N;
    no_onednn();
#endif
  }
  void backward(std::span<float> dinp, std::span<float>, std::span<const float> dout, std::span<const float>,
                std::span<const float>, int N) override {
    if (dinp.empty()) return;
    if (b_ == Backend::kRef) return ref::dropout_backward<float>(dinp, dout, mask_);
#ifdef DTS_WITH_ONEDNN
    kernel(N).backward(dinp, dout, mask_);
#else
    (void)N;
    no_onednn();
#endif
  }
  // fwd reads inp and mask, writes out; bwd reads dout and mask, writes dinp (mask generation not counted).
  LayerCost cost(bool, bool bwd) const override {
    return cost::elementwise(name(), double(in().size()), 3, 3, bwd, 1, 1, 2, 1);
  }

 private:
#ifdef DTS_WITH_ONEDNN
  dnn::Dropout& kernel(int N) {
    return cache_.get(N, [&] { return std::make_unique<dnn::Dropout>(static_cast<std::size_t>(N) * in().size()); });
  }
  PerBatch<dnn::Dropout> cache_;
#endif
  Backend b_;
  float p_;
  std::vector<float> mask_;
};

// (N, C, H, W) -> (N, C*H*W): the same memory, no work.
class Flatten final : public Layer {
 public:
  Flatten(std::string name, Dims in) : Layer(std::move(name), in, Dims{static_cast<int>(in.size()), 1, 1}) {}
  bool is_view() const override { return true; }
  void forward(std::span<float>, std::span<const float>, std::span<const float>, int, const FwdCtx&) override {}
  void backward(std::span<float>, std::span<float>, std::span<const float>, std::span<const float>,
                std::span<const float>, int) override {}
  LayerCost cost(bool, bool) const override { return LayerCost{name(), 0, 0, 0, 0, 0}; }
};

}  // namespace

std::unique_ptr<Layer> make_relu(Backend b, std::string name, Dims in) {
  return std::make_unique<Relu>(b, std::move(name), in);
}
std::unique_ptr<Layer> make_dropout(Backend b, std::string name, Dims in, float p) {
  return std::make_unique<Dropout>(b, std::move(name), in, p);
}
std::unique_ptr<Layer> make_flatten(std::string name, Dims in) {
  return std::make_unique<Flatten>(std::move(name), in);
}

struct SoftmaxXentLoss::Impl {
  Backend b;
  int K;
  std::vector<float> probs;  // (N, K) of the last forward
#ifdef DTS_WITH_ONEDNN
  PerBatch<dnn::SoftmaxXent> cache;
  dnn::SoftmaxXent& kernel(int N) {
    return cache.get(N, [&] { return std::make_unique<dnn::SoftmaxXent>(N, K); });
  }
#endif
};

SoftmaxXentLoss::SoftmaxXentLoss(Backend b, int K) : impl_(std::make_unique<Impl>()) {
  impl_->b = b;
  impl_->K = K;
}
SoftmaxXentLoss::~SoftmaxXentLoss() = default;

float SoftmaxXentLoss::forward(std::span<const float> logits, std::span<const std::int32_t> labels, int N) {
  auto& m = *impl_;
  const std::size_t n = static_cast<std::size_t>(N) * m.K;
  if (m.probs.size() < n) m.probs.resize(n);
  const std::span<float> probs(m.probs.data(), n);
  if (m.b == Backend::kRef) return ref::softmax_xent_forward<float>(probs, logits, labels, N, m.K);
#ifdef DTS_WITH_ONEDNN
  return m.kernel(N).forward(probs, logits, labels);
#else
  no_onednn();
#endif
}

void SoftmaxXentLoss::backward(std::span<float> dlogits, std::span<const std::int32_t> labels, int N) {
  auto& m = *impl_;
  const auto probs = this->probs(N);
  if (m.b == Backend::kRef) return ref::softmax_xent_backward<float>(dlogits, probs, labels, N, m.K);
#ifdef DTS_WITH_ONEDNN
  m.kernel(N).backward(dlogits, probs, labels);
#else
  no_onednn();
#endif
}

std::span<const float> SoftmaxXentLoss::probs(int N) const {
  return {impl_->probs.data(), static_cast<std::size_t>(N) * impl_->K};
}

LayerCost SoftmaxXentLoss::cost() const { return cost::softmax_xent("loss", impl_->K); }

}  // namespace dts::model::detail
