// Seeded synthetic classification set: `classes` Gaussian clusters in d = c*h*w dimensions.
//   mean_k ~ N(0, I_d)                    one per class, stream "synthetic/means"
//   y      = i mod classes, then shuffled  balanced to within one sample, stream "synthetic/order"
//   x_i    = mean_{y_i} + sigma * N(0, I_d), stream "synthetic/noise", samples in index order
// sigma = min(1, sqrt(d/2) / 4): two class means lie sqrt(2d) apart on average, so the nearest-mean (linear)
// rule misclassifies a pair with probability Phi(-sqrt(2d) / (2 sigma)) <= Phi(-4) ~ 3e-5 in expectation.
// Values are NOT clipped to [0, 1] (they are roughly N(0, 1 + sigma^2)). Same seed, same bytes.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/rng.hpp"

namespace dts::data {

namespace {

// The noise scale described in the header comment, for d = c*h*w input dimensions.
double synthetic_sigma(std::size_t d) { return std::min(1.0, std::sqrt(static_cast<double>(d) / 2.0) / 4.0); }

// Whether the product of positive `factors` stays within kMaxSampleValues (checked factor by factor: four ints
// can overflow 64 bits).
bool within_limit(std::initializer_list<int> factors) {
  std::uint64_t v = 1;
  for (const int f : factors) {
    if (v > kMaxSampleValues / static_cast<std::uint64_t>(f)) return false;
    v *= static_cast<std::uint64_t>(f);
  }
  return true;
}

}  // namespace

Dataset synthetic_shape(int n, int c, int h, int w, int classes) {
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) {
    throw InputError("", "synthetic data set: n, c, h, w must be positive, got n=" + std::to_string(n) +
                             " c=" + std::to_string(c) + " h=" + std::to_string(h) + " w=" + std::to_string(w));
  }
  if (classes < 2) {
    throw InputError("", "synthetic data set: classes must be >= 2, got " + std::to_string(classes));
  }
  // Checked before anything is allocated, so a set too large is an input error, not a std::bad_alloc.
  for (const auto& [count, what] : {std::pair{n, "samples"}, std::pair{classes, "class means"}}) {
    if (!within_limit({count, c, h, w})) {
      throw InputError("", "synthetic data set: its " + std::string(what) + " would hold " + std::to_string(count) +
                               " x " + std::to_string(c) + " x " + std::to_string(h) + " x " + std::to_string(w) +
                               " values, more than the limit of " + std::to_string(kMaxSampleValues) +
                               " (kMaxSampleValues, 4 GiB as floats)");
    }
  }
  Dataset ds;
  ds.name = "synthetic";
  ds.n = n;
  ds.c = c;
  ds.h = h;
  ds.w = w;
  ds.classes = classes;
  return ds;
}

Dataset synthetic(std::uint64_t seed, int n, int c, int h, int w, int classes) {
  Dataset ds = synthetic_shape(n, c, h, w, classes);
  const std::size_t d = ds.sample_size();

  // 1. Class means, class by class.
  Rng mean_rng(seed, 0, "synthetic/means");
  std::vector<float> means(static_cast<std::size_t>(classes) * d);
  for (auto& m : means) m = static_cast<float>(mean_rng.normal());

  // 2. Balanced labels in round robin, then a Fisher-Yates shuffle of their order.
  ds.y.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ds.y[static_cast<std::size_t>(i)] = i % classes;
  Rng order_rng(seed, 0, "synthetic/order");
  for (std::size_t i = ds.y.size() - 1; i > 0; --i) std::swap(ds.y[i], ds.y[order_rng.below(i + 1)]);

  // 3. Samples: the class mean plus isotropic Gaussian noise.
  const double sigma = synthetic_sigma(d);
  Rng noise_rng(seed, 0, "synthetic/noise");
  ds.x.resize(static_cast<std::size_t>(n) * d);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
    const float* mean = means.data() + static_cast<std::size_t>(ds.y[i]) * d;
    float* xi = ds.x.data() + i * d;
    for (std::size_t j = 0; j < d; ++j) xi[j] = static_cast<float>(mean[j] + sigma * noise_rng.normal());
  }
  return ds;
}

}  // namespace dts::data
