// Elementwise rules: vectorized loops, split over OpenMP threads for model-sized vectors (they are
// memory-bound; kernels/elementwise.hpp). Each element is computed alone, so the thread count never changes a
// result.
#include "algorithms/rules/vector_ops.hpp"

#include <cstddef>

#include "kernels/elementwise.hpp"

namespace dts::rules {
namespace {
void check(std::size_t a, std::size_t b) { DTS_ASSERT(a == b, "vector sizes differ"); }
}  // namespace

void axpy(Slice y, float a, ConstSlice x) {
  check(y.count, x.count);
  if (y.data.empty() || x.data.empty()) return;
  float* yp = y.data.data();
  const float* xp = x.data.data();
  const auto n = static_cast<std::ptrdiff_t>(y.count);
  elementwise(n, [=](std::ptrdiff_t i) { yp[i] += a * xp[i]; });
}

void scale(Slice x, float a) {
  float* xp = x.data.data();
  const auto n = static_cast<std::ptrdiff_t>(x.data.size());
  elementwise(n, [=](std::ptrdiff_t i) { xp[i] *= a; });
}

void copy(Slice dst, ConstSlice src) {
  check(dst.count, src.count);
  if (dst.data.empty() || src.data.empty()) return;
  float* d = dst.data.data();
  const float* s = src.data.data();
  const auto n = static_cast<std::ptrdiff_t>(dst.count);
  elementwise(n, [=](std::ptrdiff_t i) { d[i] = s[i]; });
}

void elastic_diff(Slice diff, ConstSlice x, ConstSlice center, float alpha) {
  check(diff.count, x.count);
  check(diff.count, center.count);
  if (diff.data.empty() || x.data.empty() || center.data.empty()) return;
  float* d = diff.data.data();
  const float* xp = x.data.data();
  const float* c = center.data.data();
  const auto n = static_cast<std::ptrdiff_t>(diff.count);
  elementwise(n, [=](std::ptrdiff_t i) { d[i] = alpha * (xp[i] - c[i]); });
}

}  // namespace dts::rules
