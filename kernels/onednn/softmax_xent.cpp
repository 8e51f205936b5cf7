// oneDNN softmax cross-entropy: the softmax primitive writes probs; the loss and the backward are plain
// loops over N*K elements. The loss is log-sum-exp of the logits minus the label's logit, in double, as in
// ref: neither -log(probs) nor oneDNN's logsoftmax would do, since in float they give a confident right
// answer's loss (~1e-3, where log(1 + small) cancels) only to about 3 digits.
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/onednn/engine.hpp"
#include "kernels/onednn/layers.hpp"

namespace dts::kernels::onednn {

using detail::f32_md;
using detail::Tag;

struct SoftmaxXent::Impl {
  std::string name;  // layer and shape, for error messages
  int N = 0, K = 0;
  dnnl::softmax_forward softmax;
  dnnl::memory logits, probs;

  void check(std::size_t probs_size, std::size_t other_size, std::span<const std::int32_t> labels) const {
    const auto NK = static_cast<std::size_t>(N) * K;
    DTS_ASSERT(probs_size == NK && other_size == NK, name + ": probs, logits and dlogits must be (N, K)");
    DTS_ASSERT(labels.size() == static_cast<std::size_t>(N), name + ": labels must be (N)");
    for (const std::int32_t y : labels) DTS_ASSERT(y >= 0 && y < K, name + ": label out of [0, K)");
  }
};

SoftmaxXent::SoftmaxXent(int N, int K) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = "onednn::SoftmaxXent(N=" + std::to_string(N) + ", K=" + std::to_string(K) + ")";
  m.N = N, m.K = K;
  DTS_ASSERT(N > 0 && K > 0, m.name + ": empty shape");
  detail::guarded(m.name, [&] {
    const auto md = f32_md({N, K}, Tag::nc);
    constexpr int kAxis = 1;  // classes
    m.softmax = dnnl::softmax_forward({{dnnl::prop_kind::forward_inference, md, kAxis}, detail::engine()});
    m.logits = detail::unbound(md), m.probs = detail::unbound(md);
  });
}

SoftmaxXent::~SoftmaxXent() = default;

float SoftmaxXent::forward(std::span<float> probs, std::span<const float> logits,
                           std::span<const std::int32_t> labels) {
  Impl& m = *impl_;
  m.check(probs.size(), logits.size(), labels);
  detail::guarded(m.name, [&] {
    m.softmax.execute(detail::stream(), {{DNNL_ARG_SRC, detail::set(m.logits, logits.data())},
                                         {DNNL_ARG_DST, detail::set(m.probs, probs.data())}});
    detail::stream().wait();
  });
  double loss = 0;  // sum over n of logsumexp(logits_n) - logits_n[label_n]
  for (int n = 0; n < m.N; ++n) {
    const float* x = logits.data() + static_cast<std::size_t>(n) * m.K;
    float max = x[0];
    for (int k = 1; k < m.K; ++k) max = std::max(max, x[k]);
    double sum = 0;
    for (int k = 0; k < m.K; ++k) sum += std::exp(static_cast<double>(x[k] - max));
    loss += std::log(sum) - static_cast<double>(x[labels[n]] - max);
  }
  return static_cast<float>(loss / m.N);
}

void SoftmaxXent::backward(std::span<float> dlogits, std::span<const float> probs,
                           std::span<const std::int32_t> labels) {
  const Impl& m = *impl_;
  m.check(probs.size(), dlogits.size(), labels);
  const float inv_n = 1.0f / static_cast<float>(m.N);
  for (int n = 0; n < m.N; ++n)
    for (int k = 0; k < m.K; ++k) {
      const std::size_t i = static_cast<std::size_t>(n) * m.K + k;
      dlogits[i] = (probs[i] - (k == labels[n] ? 1.0f : 0.0f)) * inv_n;
    }
}

}  // namespace dts::kernels::onednn
