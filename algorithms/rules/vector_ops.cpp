// Elementwise rules; loops the compiler vectorizes.
#include "algorithms/rules/vector_ops.hpp"

namespace dts::rules {
namespace {
void check(std::size_t a, std::size_t b) { DTS_ASSERT(a == b, "vector sizes differ"); }
}  // namespace

void axpy(Slice y, float a, ConstSlice x) {
  check(y.count, x.count);
  if (y.data.empty() || x.data.empty()) return;
  for (std::size_t i = 0; i < y.count; ++i) y.data[i] += a * x.data[i];
}

void scale(Slice x, float a) {
  for (float& v : x.data) v *= a;
}

void copy(Slice dst, ConstSlice src) {
  check(dst.count, src.count);
  if (dst.data.empty() || src.data.empty()) return;
  for (std::size_t i = 0; i < dst.count; ++i) dst.data[i] = src.data[i];
}

void elastic_diff(Slice diff, ConstSlice x, ConstSlice center, float alpha) {
  check(diff.count, x.count);
  check(diff.count, center.count);
  if (diff.data.empty() || x.data.empty() || center.data.empty()) return;
  for (std::size_t i = 0; i < diff.count; ++i) diff.data[i] = alpha * (x.data[i] - center.data[i]);
}

}  // namespace dts::rules
