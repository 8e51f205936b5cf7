// Reference fully connected layer: out = inp * weight^T + bias, weight row-major (OC, C), as in llm.c's
// matmul_forward_naive. Plain loops, in orders that keep the innermost loop contiguous (forward: a dot
// product over C; backward: axpy rows; see loops.hpp) and reuse each weight row across a block of samples
// while it sits in L1, so that the reference MLP trains at a usable speed.
#include <algorithm>
#include <cstddef>

#include "core/errors.hpp"
#include "kernels/ref/kernels.hpp"
#include "kernels/ref/loops.hpp"

namespace dts::kernels::ref {

using detail::axpy;
using detail::dot;

namespace {

constexpr int kBlock = 8;  // samples (or output rows) sharing one pass over a weight row

std::size_t elems(int a, int b) { return static_cast<std::size_t>(a) * static_cast<std::size_t>(b); }

}  // namespace

template <typename T>
void linear_forward(std::span<T> out, std::span<const T> inp, std::span<const T> weight, std::span<const T> bias, int N,
                    int C, int OC) {
  DTS_ASSERT(out.size() == elems(N, OC), "linear_forward: out must be (N, OC)");
  DTS_ASSERT(inp.size() == elems(N, C), "linear_forward: inp must be (N, C)");
  DTS_ASSERT(weight.size() == elems(OC, C), "linear_forward: weight must be (OC, C)");
  DTS_ASSERT(bias.size() == static_cast<std::size_t>(OC), "linear_forward: bias must be (OC)");
  for (int n0 = 0; n0 < N; n0 += kBlock) {
    const int n1 = std::min(N, n0 + kBlock);
    for (int oc = 0; oc < OC; ++oc) {
      const T* w = weight.data() + elems(oc, C);
      for (int n = n0; n < n1; ++n) out[elems(n, OC) + oc] = bias[oc] + dot(inp.data() + elems(n, C), w, C);
    }
  }
}

template <typename T>
void linear_backward(std::span<T> dinp, std::span<T> dweight, std::span<T> dbias, std::span<const T> dout,
                     std::span<const T> inp, std::span<const T> weight, int N, int C, int OC) {
  DTS_ASSERT(dinp.empty() || dinp.size() == elems(N, C), "linear_backward: dinp must be (N, C) or empty");
  DTS_ASSERT(dweight.size() == elems(OC, C), "linear_backward: dweight must be (OC, C)");
  DTS_ASSERT(dbias.size() == static_cast<std::size_t>(OC), "linear_backward: dbias must be (OC)");
  DTS_ASSERT(dout.size() == elems(N, OC), "linear_backward: dout must be (N, OC)");
  DTS_ASSERT(inp.size() == elems(N, C), "linear_backward: inp must be (N, C)");
  DTS_ASSERT(weight.size() == elems(OC, C), "linear_backward: weight must be (OC, C)");

  // dinp[n, :] = sum_oc dout[n, oc] * weight[oc, :]
  if (!dinp.empty()) {
    std::fill(dinp.begin(), dinp.end(), T(0));
    for (int n0 = 0; n0 < N; n0 += kBlock) {
      const int n1 = std::min(N, n0 + kBlock);
      for (int oc = 0; oc < OC; ++oc)
        for (int n = n0; n < n1; ++n)
          axpy(dinp.data() + elems(n, C), dout[elems(n, OC) + oc], weight.data() + elems(oc, C), C);
    }
  }
  // dweight[oc, :] = sum_n dout[n, oc] * inp[n, :]
  std::fill(dweight.begin(), dweight.end(), T(0));
  for (int oc0 = 0; oc0 < OC; oc0 += kBlock) {
    const int oc1 = std::min(OC, oc0 + kBlock);
    for (int n = 0; n < N; ++n)
      for (int oc = oc0; oc < oc1; ++oc)
        axpy(dweight.data() + elems(oc, C), dout[elems(n, OC) + oc], inp.data() + elems(n, C), C);
  }
  // dbias[oc] = sum_n dout[n, oc]
  std::fill(dbias.begin(), dbias.end(), T(0));
  for (int n = 0; n < N; ++n) axpy(dbias.data(), T(1), dout.data() + elems(n, OC), OC);
}

#define DTS_INSTANTIATE(T)                                                                                            \
  template void linear_forward<T>(std::span<T>, std::span<const T>, std::span<const T>, std::span<const T>, int, int, \
                                  int);                                                                               \
  template void linear_backward<T>(std::span<T>, std::span<T>, std::span<T>, std::span<const T>, std::span<const T>,  \
                                   std::span<const T>, int, int, int);
DTS_INSTANTIATE(float)
DTS_INSTANTIATE(double)
#undef DTS_INSTANTIATE

}  // namespace dts::kernels::ref
