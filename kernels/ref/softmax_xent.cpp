// Reference softmax cross-entropy, mean over the batch: probs = softmax(logits) row by row (max subtracted),
// loss_n = logsumexp(logits_n) - logits_n[label_n], computed from the logits rather than log(probs) so that
// a confident wrong answer gives a large finite loss instead of -log(0). Sums are taken in double.
#include <cmath>
#include <cstddef>
#include <string>

#include "core/errors.hpp"
#include "kernels/ref/kernels.hpp"

namespace dts::kernels::ref {
namespace {

void check_sizes(std::size_t probs, std::size_t logits, std::span<const std::int32_t> labels, int N, int K,
                 const char* what) {
  const auto NK = static_cast<std::size_t>(N) * K;
  DTS_ASSERT(N > 0 && K > 0, std::string(what) + ": empty batch or no classes");
  DTS_ASSERT(probs == NK && logits == NK, std::string(what) + ": probs and logits must be (N, K)");
  DTS_ASSERT(labels.size() == static_cast<std::size_t>(N), std::string(what) + ": labels must be (N)");
  for (const std::int32_t y : labels) DTS_ASSERT(y >= 0 && y < K, std::string(what) + ": label out of [0, K)");
}

}  // namespace

template <typename T>
T softmax_xent_forward(std::span<T> probs, std::span<const T> logits, std::span<const std::int32_t> labels, int N,
                       int K) {
  check_sizes(probs.size(), logits.size(), labels, N, K, "softmax_xent_forward");
  double loss = 0;
  for (int n = 0; n < N; ++n) {
    const T* x = logits.data() + static_cast<std::size_t>(n) * K;
    T* p = probs.data() + static_cast<std::size_t>(n) * K;
    T max = x[0];
    for (int k = 1; k < K; ++k) max = x[k] > max ? x[k] : max;
    double sum = 0;
    for (int k = 0; k < K; ++k) {
      p[k] = std::exp(x[k] - max);
      sum += static_cast<double>(p[k]);
    }
    for (int k = 0; k < K; ++k) p[k] = static_cast<T>(static_cast<double>(p[k]) / sum);
    loss += std::log(sum) - static_cast<double>(x[labels[n]] - max);
  }
  return static_cast<T>(loss / N);
}

template <typename T>
void softmax_xent_backward(std::span<T> dlogits, std::span<const T> probs, std::span<const std::int32_t> labels, int N,
                           int K) {
  check_sizes(dlogits.size(), probs.size(), labels, N, K, "softmax_xent_backward");
  const T inv_n = T(1) / static_cast<T>(N);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k) {
      const std::size_t i = static_cast<std::size_t>(n) * K + k;
      dlogits[i] = (probs[i] - (k == labels[n] ? T(1) : T(0))) * inv_n;
    }
}

#define DTS_INSTANTIATE(T)                                                                                       \
  template T softmax_xent_forward<T>(std::span<T>, std::span<const T>, std::span<const std::int32_t>, int, int); \
  template void softmax_xent_backward<T>(std::span<T>, std::span<const T>, std::span<const std::int32_t>, int, int);
DTS_INSTANTIATE(float)
DTS_INSTANTIATE(double)
#undef DTS_INSTANTIATE

}  // namespace dts::kernels::ref
