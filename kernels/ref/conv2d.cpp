// Reference 2-D convolution (cross-correlation) as Caffe computes it: per sample, im2col unfolds the input
// into col (C*KH*KW, OH*OW), one row per kernel tap, zeros where the tap falls in the padding; then
//   forward          out (OC, OH*OW)  = weight (OC, C*KH*KW) x col + bias
//   backward data    dcol             = weight^T x dout, folded back into dinp by col2im (scatter-add)
//   backward weights dweight         += dout x col^T,  dbias += row sums of dout
// Plain loops whose inner loop is an axpy or a dot product along an OH*OW row (loops.hpp): long and
// contiguous, so the reference LeNet and cifar10-quick train at a usable speed in tests.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "kernels/ref/kernels.hpp"
#include "kernels/ref/loops.hpp"

namespace dts::kernels::ref {
namespace {

std::size_t idx4(int a, int b, int c, int d, int B, int C, int D) {
  return ((static_cast<std::size_t>(a) * B + b) * C + c) * D + d;
}

void check_sizes(std::size_t out, std::size_t inp, std::size_t weight, std::size_t bias, const ConvShape& s,
                 const char* what) {
  DTS_ASSERT(s.stride > 0 && s.pad >= 0 && s.OH() > 0 && s.OW() > 0, std::string(what) + ": bad shape");
  DTS_ASSERT(out == idx4(s.N, 0, 0, 0, s.OC, s.OH(), s.OW()), std::string(what) + ": out must be (N, OC, OH, OW)");
  DTS_ASSERT(inp == idx4(s.N, 0, 0, 0, s.C, s.H, s.W), std::string(what) + ": inp must be (N, C, H, W)");
  DTS_ASSERT(weight == idx4(s.OC, 0, 0, 0, s.C, s.KH, s.KW), std::string(what) + ": weight must be (OC, C, KH, KW)");
  DTS_ASSERT(bias == static_cast<std::size_t>(s.OC), std::string(what) + ": bias must be (OC)");
}

// Calls fn(col_index, inp_index) for every tap (c, kh, kw) and output (oh, ow) of one sample whose input
// lies inside the image; col_index = ((c * KH + kh) * KW + kw) * OH*OW + oh * OW + ow, inp_index is
// relative to the sample. Taps in the padding are skipped (their col entries stay 0).
template <typename F>
void for_each_tap(const ConvShape& s, F&& fn) {
  const int OH = s.OH(), OW = s.OW();
  std::size_t row = 0;  // col row (c, kh, kw) offset
  for (int c = 0; c < s.C; ++c)
    for (int kh = 0; kh < s.KH; ++kh)
      for (int kw = 0; kw < s.KW; ++kw, row += static_cast<std::size_t>(OH) * OW)
        for (int oh = 0; oh < OH; ++oh) {
          const int ih = oh * s.stride + kh - s.pad;
          if (ih < 0 || ih >= s.H) continue;
          for (int ow = 0; ow < OW; ++ow) {
            const int iw = ow * s.stride + kw - s.pad;
            if (iw >= 0 && iw < s.W) fn(row + oh * OW + ow, (static_cast<std::size_t>(c) * s.H + ih) * s.W + iw);
          }
        }
}

// col (C*KH*KW, OH*OW) from one sample x (C, H, W).
template <typename T>
void im2col(std::vector<T>& col, const T* x, const ConvShape& s) {
  std::fill(col.begin(), col.end(), T(0));
  for_each_tap(s, [&](std::size_t ci, std::size_t xi) { col[ci] = x[xi]; });
}

// dx (C, H, W) of one sample += the taps of dcol (C*KH*KW, OH*OW); dx must be zeroed by the caller.
template <typename T>
void col2im_add(T* dx, const std::vector<T>& dcol, const ConvShape& s) {
  for_each_tap(s, [&](std::size_t ci, std::size_t xi) { dx[xi] += dcol[ci]; });
}

}  // namespace

template <typename T>
void conv2d_forward(std::span<T> out, std::span<const T> inp, std::span<const T> weight, std::span<const T> bias,
                    const ConvShape& s) {
  check_sizes(out.size(), inp.size(), weight.size(), bias.size(), s, "conv2d_forward");
  const int P = s.OH() * s.OW(), CKK = s.C * s.KH * s.KW;  // output pixels, taps per output channel
  std::vector<T> col(static_cast<std::size_t>(CKK) * P);
  for (int n = 0; n < s.N; ++n) {
    im2col(col, inp.data() + idx4(n, 0, 0, 0, s.C, s.H, s.W), s);
    for (int oc = 0; oc < s.OC; ++oc) {
      T* y = out.data() + idx4(n, oc, 0, 0, s.OC, 1, P);  // (OH*OW)
      const T* w = weight.data() + static_cast<std::size_t>(oc) * CKK;
      std::fill(y, y + P, bias[oc]);
      for (int k = 0; k < CKK; ++k) detail::axpy(y, w[k], col.data() + static_cast<std::size_t>(k) * P, P);
    }
  }
}

template <typename T>
void conv2d_backward(std::span<T> dinp, std::span<T> dweight, std::span<T> dbias, std::span<const T> dout,
                     std::span<const T> inp, std::span<const T> weight, const ConvShape& s) {
  check_sizes(dout.size(), inp.size(), weight.size(), dbias.size(), s, "conv2d_backward");
  DTS_ASSERT(dinp.empty() || dinp.size() == inp.size(), "conv2d_backward: dinp must be (N, C, H, W) or empty");
  DTS_ASSERT(dweight.size() == weight.size(), "conv2d_backward: dweight must be (OC, C, KH, KW)");
  const int P = s.OH() * s.OW(), CKK = s.C * s.KH * s.KW;
  std::vector<T> col(static_cast<std::size_t>(CKK) * P), dcol(dinp.empty() ? 0 : col.size());
  if (!dinp.empty()) std::fill(dinp.begin(), dinp.end(), T(0));
  std::fill(dweight.begin(), dweight.end(), T(0));
  std::fill(dbias.begin(), dbias.end(), T(0));
  for (int n = 0; n < s.N; ++n) {
    im2col(col, inp.data() + idx4(n, 0, 0, 0, s.C, s.H, s.W), s);
    std::fill(dcol.begin(), dcol.end(), T(0));
    for (int oc = 0; oc < s.OC; ++oc) {
      const T* dy = dout.data() + idx4(n, oc, 0, 0, s.OC, 1, P);  // (OH*OW)
      const T* w = weight.data() + static_cast<std::size_t>(oc) * CKK;
      T* dw = dweight.data() + static_cast<std::size_t>(oc) * CKK;
      for (int p = 0; p < P; ++p) dbias[oc] += dy[p];
      for (int k = 0; k < CKK; ++k) {
        const std::size_t row = static_cast<std::size_t>(k) * P;
        dw[k] += detail::dot(dy, col.data() + row, P);
        if (!dcol.empty()) detail::axpy(dcol.data() + row, w[k], dy, P);
      }
    }
    if (!dinp.empty()) col2im_add(dinp.data() + idx4(n, 0, 0, 0, s.C, s.H, s.W), dcol, s);
  }
}

#define DTS_INSTANTIATE(T)                                                                                           \
  template void conv2d_forward<T>(std::span<T>, std::span<const T>, std::span<const T>, std::span<const T>,          \
                                  const ConvShape&);                                                                 \
  template void conv2d_backward<T>(std::span<T>, std::span<T>, std::span<T>, std::span<const T>, std::span<const T>, \
                                   std::span<const T>, const ConvShape&);
DTS_INSTANTIATE(float)
DTS_INSTANTIATE(double)
#undef DTS_INSTANTIATE

}  // namespace dts::kernels::ref
