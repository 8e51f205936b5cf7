// Reference elementwise kernels: ReLU and inverted dropout. Dropout's mask is drawn here, from
// dts::Rng(seed, /*rank=*/0, stream): the caller folds its rank and step into `seed` and names the layer with
// `stream` (e.g. stream_id("dropout") + layer index), so that both backends and the gradient check can
// apply one mask.
#include <algorithm>
#include <cstddef>

#include "core/errors.hpp"
#include "kernels/ref/kernels.hpp"
#include "kernels/rng.hpp"

namespace dts::kernels::ref {

template <typename T>
void relu_forward(std::span<T> out, std::span<const T> inp) {
  DTS_ASSERT(out.size() == inp.size(), "relu_forward: out and inp sizes differ");
  for (std::size_t i = 0; i < inp.size(); ++i) out[i] = inp[i] > T(0) ? inp[i] : T(0);
}

template <typename T>
void relu_backward(std::span<T> dinp, std::span<const T> dout, std::span<const T> inp) {
  DTS_ASSERT(dinp.size() == dout.size() && dout.size() == inp.size(), "relu_backward: sizes differ");
  for (std::size_t i = 0; i < inp.size(); ++i) dinp[i] = inp[i] > T(0) ? dout[i] : T(0);
}

void dropout_mask(std::span<float> mask, float p, std::uint64_t seed, std::uint64_t stream) {
  DTS_ASSERT(p >= 0.0f && p < 1.0f, "dropout_mask: p must be in [0, 1)");
  Rng rng(seed, 0, stream);
  const float keep_scale = 1.0f / (1.0f - p);
  for (float& m : mask) m = rng.uniform_f() < p ? 0.0f : keep_scale;
}

template <typename T>
void dropout_forward(std::span<T> out, std::span<const T> inp, std::span<const float> mask) {
  DTS_ASSERT(out.size() == inp.size() && inp.size() == mask.size(), "dropout_forward: sizes differ");
  for (std::size_t i = 0; i < inp.size(); ++i) out[i] = inp[i] * static_cast<T>(mask[i]);
}

template <typename T>
void dropout_backward(std::span<T> dinp, std::span<const T> dout, std::span<const float> mask) {
  DTS_ASSERT(dinp.size() == dout.size() && dout.size() == mask.size(), "dropout_backward: sizes differ");
  for (std::size_t i = 0; i < dout.size(); ++i) dinp[i] = dout[i] * static_cast<T>(mask[i]);
}

#define DTS_INSTANTIATE(T)                                                                    \
  template void relu_forward<T>(std::span<T>, std::span<const T>);                            \
  template void relu_backward<T>(std::span<T>, std::span<const T>, std::span<const T>);       \
  template void dropout_forward<T>(std::span<T>, std::span<const T>, std::span<const float>); \
  template void dropout_backward<T>(std::span<T>, std::span<const T>, std::span<const float>);
DTS_INSTANTIATE(float)
DTS_INSTANTIATE(double)
#undef DTS_INSTANTIATE

}  // namespace dts::kernels::ref
