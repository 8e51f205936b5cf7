// Elementwise loops over vectors that may be model-sized: split over the OpenMP threads from
// kElementwiseParallelFrom elements on (they are memory-bound), in the calling thread below. GCC's `omp parallel ... if
// (false)` still sets up a team of one thread: 0.28 us a call on this machine, six times a 512-float axpy, and on the
// path of every small message of the MPI backend (a received chunk is added in place). Each element is computed alone,
// so neither the split nor the vector width changes a result. Each thread loops over a copy of `body` (firstprivate):
// looping over the caller's closure, whose captured scalars a float store might alias, reloaded them at every element,
// and the momentum step took twice as long; `omp simd` on these loops made it 5 % slower than the compiler's own
// vectorization.
#pragma once

#include <cstddef>

namespace dts {

inline constexpr std::ptrdiff_t kElementwiseParallelFrom = 1 << 16;

template <typename Body>
inline void elementwise(std::ptrdiff_t n, Body body) {
  if (n < kElementwiseParallelFrom) {
    for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static) firstprivate(body)
  for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
}

}  // namespace dts
