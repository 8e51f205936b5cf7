// Numeric helpers shared by the tests: central finite differences for gradient checks, error metrics
// (largest relative error; ggml's normalised mean squared error, NMSE) and deterministic random data drawn
// from dts::Rng. Header-only templates over any contiguous container of float or double (std::vector,
// std::span); results are computed in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/rng.hpp"

namespace dts::test {

// Numerical gradient of objective() (any callable returning a number) with respect to every element of
// params: g[i] = (L(p + eps e_i) - L(p - eps e_i)) / (2 eps). Each element is restored exactly afterwards.
// Truncation error is O(eps^2 L'''), rounding error about 1e-16 |L| / eps in double.
template <typename Params, typename F>
std::vector<double> central_difference(Params& params, F&& objective, double eps) {
  using T = std::remove_reference_t<decltype(params[0])>;
  std::vector<double> grad(std::size(params));
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const T saved = params[i];
    params[i] = static_cast<T>(static_cast<double>(saved) + eps);
    const auto plus = static_cast<double>(objective());
    params[i] = static_cast<T>(static_cast<double>(saved) - eps);
    const auto minus = static_cast<double>(objective());
    params[i] = saved;
    grad[i] = (plus - minus) / (2 * eps);
  }
  return grad;
}

// max_i |actual_i - expected_i| / max(|expected_i|, floor): relative for values above `floor`, absolute
// (scaled by 1/floor) below it, so that exact zeros do not divide by zero.
template <typename A, typename E>
double max_rel_error(const A& actual, const E& expected, double floor = 1e-3) {
  double worst = std::size(actual) == std::size(expected) ? 0.0 : INFINITY;
  for (std::size_t i = 0; i < std::min(std::size(actual), std::size(expected)); ++i) {
    const auto a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
    const double err = std::abs(a - e) / std::max(std::abs(e), floor);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

// ggml's NMSE: sum (actual - expected)^2 / sum expected^2 (plain squared error when expected is all zero).
// Size mismatch or NaN gives infinity.
template <typename A, typename E>
double nmse(const A& actual, const E& expected) {
  if (std::size(actual) != std::size(expected)) return INFINITY;
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < std::size(actual); ++i) {
    const auto a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
    err += (a - e) * (a - e);
    ref += e * e;
  }
  const double result = ref > 0 ? err / ref : err;
  return std::isnan(result) ? INFINITY : result;
}

// x[i] ~ U[lo, hi)
template <typename Container>
void fill_uniform(Container& x, Rng& rng, double lo = -1.0, double hi = 1.0) {
  using T = std::remove_reference_t<decltype(x[0])>;
  for (auto& v : x) v = static_cast<T>(rng.uniform(lo, hi));
}

// n values ~ U[lo, hi) from Rng(seed).
template <typename T>
std::vector<T> random_uniform(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<T> x(n);
  Rng rng(seed);
  fill_uniform(x, rng, lo, hi);
  return x;
}

// n values ~ N(0, stddev^2) from Rng(seed).
template <typename T>
std::vector<T> random_normal(std::size_t n, std::uint64_t seed, double stddev = 1.0) {
  std::vector<T> x(n);
  Rng rng(seed);
  for (auto& v : x) v = static_cast<T>(stddev * rng.normal());
  return x;
}

// n pairwise-distinct values in [lo, hi), at least (hi - lo) / n apart, in random order: inputs for max
// pooling without ties, robust to finite-difference steps much smaller than the gap.
template <typename T>
std::vector<T> random_distinct(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<T>(lo + (hi - lo) * (static_cast<double>(i) + 0.5) / static_cast<double>(n));
  Rng rng(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(x[i - 1], x[rng.below(i)]);  // Fisher-Yates
  return x;
}

// n values with |x| in [min_abs, max_abs] and a random sign: inputs for ReLU away from its kink at 0.
template <typename T>
std::vector<T> random_away_from_zero(std::size_t n, std::uint64_t seed, double min_abs = 0.1, double max_abs = 1.0) {
  std::vector<T> x(n);
  Rng rng(seed);
  for (auto& v : x) v = static_cast<T>((rng.below(2) ? 1.0 : -1.0) * rng.uniform(min_abs, max_abs));
  return x;
}

// n class labels uniform in [0, classes).
inline std::vector<std::int32_t> random_labels(std::size_t n, int classes, std::uint64_t seed) {
  std::vector<std::int32_t> y(n);
  Rng rng(seed);
  for (auto& v : y) v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes)));
  return y;
}

}  // namespace dts::test
