// Reference max and average pooling with Caffe's window rule (PoolShape): the window of output (oh, ow)
// starts at (oh * stride - pad, ow * stride - pad), is clipped to the padded input for the average's
// divisor (so ceil-mode overhang beyond the padding does not count) and to the real input for the values.
// Max pooling records the flat input index of each max (into the whole (N, C, H, W) tensor) for backward.
#include <algorithm>
#include <cstddef>
#include <string>

#include "core/errors.hpp"
#include "kernels/ref/kernels.hpp"

namespace dts::kernels::ref {
namespace {

// One pooling window along both axes: [h0, h1) x [w0, w1) inside the real input, `count` its divisor.
struct Window {
  int h0, h1, w0, w1, count;
};

Window window(const PoolShape& s, int oh, int ow) {
  int h0 = oh * s.stride - s.pad, w0 = ow * s.stride - s.pad;
  int h1 = std::min(h0 + s.K, s.H + s.pad), w1 = std::min(w0 + s.K, s.W + s.pad);
  const int count = (h1 - h0) * (w1 - w0);  // clipped to the padded input (Caffe)
  h0 = std::max(h0, 0), w0 = std::max(w0, 0);
  h1 = std::min(h1, s.H), w1 = std::min(w1, s.W);
  return {h0, h1, w0, w1, count};
}

std::size_t in_size(const PoolShape& s) { return static_cast<std::size_t>(s.N) * s.C * s.H * s.W; }
std::size_t out_size(const PoolShape& s) { return static_cast<std::size_t>(s.N) * s.C * s.OH() * s.OW(); }

void check_sizes(std::size_t out, std::size_t inp, const PoolShape& s, const char* what) {
  DTS_ASSERT(s.OH() > 0 && s.OW() > 0 && s.pad < s.K, std::string(what) + ": bad pooling shape");
  // Every window must hold an input element (PoolShape ensures it when pad > 0, not for stride > K).
  DTS_ASSERT((s.OH() - 1) * s.stride - s.pad < s.H && (s.OW() - 1) * s.stride - s.pad < s.W,
             std::string(what) + ": a pooling window lies entirely outside the input");
  DTS_ASSERT(out == out_size(s), std::string(what) + ": out must be (N, C, OH, OW)");
  DTS_ASSERT(inp == in_size(s), std::string(what) + ": inp must be (N, C, H, W)");
}

}  // namespace

template <typename T>
void maxpool2d_forward(std::span<T> out, std::span<std::int32_t> argmax, std::span<const T> inp, const PoolShape& s) {
  check_sizes(out.size(), inp.size(), s, "maxpool2d_forward");
  DTS_ASSERT(argmax.size() == out.size(), "maxpool2d_forward: argmax must be (N, C, OH, OW)");
  DTS_ASSERT(inp.size() <= 0x7fffffffu, "maxpool2d_forward: input too large for int32 argmax");
  const int OH = s.OH(), OW = s.OW();
  std::size_t o = 0;  // flat output index, row-major
  for (int nc = 0; nc < s.N * s.C; ++nc) {
    const auto plane = static_cast<std::int32_t>(static_cast<std::size_t>(nc) * s.H * s.W);
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow, ++o) {
        const Window win = window(s, oh, ow);
        std::int32_t best = plane + win.h0 * s.W + win.w0;  // PoolShape keeps every window non-empty
        for (int h = win.h0; h < win.h1; ++h)
          for (int w = win.w0; w < win.w1; ++w) {
            const std::int32_t i = plane + h * s.W + w;
            if (inp[i] > inp[best]) best = i;  // strict: ties keep the first in row-major order
          }
        out[o] = inp[best];
        argmax[o] = best;
      }
  }
}

template <typename T>
void maxpool2d_backward(std::span<T> dinp, std::span<const T> dout, std::span<const std::int32_t> argmax,
                        const PoolShape& s) {
  check_sizes(dout.size(), dinp.size(), s, "maxpool2d_backward");
  DTS_ASSERT(argmax.size() == dout.size(), "maxpool2d_backward: argmax must be (N, C, OH, OW)");
  std::fill(dinp.begin(), dinp.end(), T(0));
  for (std::size_t o = 0; o < dout.size(); ++o) dinp[argmax[o]] += dout[o];
}

template <typename T>
void avgpool2d_forward(std::span<T> out, std::span<const T> inp, const PoolShape& s) {
  check_sizes(out.size(), inp.size(), s, "avgpool2d_forward");
  const int OH = s.OH(), OW = s.OW();
  std::size_t o = 0;
  for (int nc = 0; nc < s.N * s.C; ++nc) {
    const T* x = inp.data() + static_cast<std::size_t>(nc) * s.H * s.W;
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow, ++o) {
        const Window win = window(s, oh, ow);
        T sum = 0;
        for (int h = win.h0; h < win.h1; ++h)
          for (int w = win.w0; w < win.w1; ++w) sum += x[h * s.W + w];
        out[o] = sum / static_cast<T>(win.count);
      }
  }
}

template <typename T>
void avgpool2d_backward(std::span<T> dinp, std::span<const T> dout, const PoolShape& s) {
  check_sizes(dout.size(), dinp.size(), s, "avgpool2d_backward");
  const int OH = s.OH(), OW = s.OW();
  std::fill(dinp.begin(), dinp.end(), T(0));
  std::size_t o = 0;
  for (int nc = 0; nc < s.N * s.C; ++nc) {
    T* dx = dinp.data() + static_cast<std::size_t>(nc) * s.H * s.W;
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow, ++o) {
        const Window win = window(s, oh, ow);
        const T g = dout[o] / static_cast<T>(win.count);
        for (int h = win.h0; h < win.h1; ++h)
          for (int w = win.w0; w < win.w1; ++w) dx[h * s.W + w] += g;
      }
  }
}

#define DTS_INSTANTIATE(T)                                                                                         \
  template void maxpool2d_forward<T>(std::span<T>, std::span<std::int32_t>, std::span<const T>, const PoolShape&); \
  template void maxpool2d_backward<T>(std::span<T>, std::span<const T>, std::span<const std::int32_t>,             \
                                      const PoolShape&);                                                           \
  template void avgpool2d_forward<T>(std::span<T>, std::span<const T>, const PoolShape&);                          \
  template void avgpool2d_backward<T>(std::span<T>, std::span<const T>, const PoolShape&);
DTS_INSTANTIATE(float)
DTS_INSTANTIATE(double)
#undef DTS_INSTANTIATE

}  // namespace dts::kernels::ref
