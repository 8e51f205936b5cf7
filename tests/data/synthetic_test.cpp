// Synthetic data set: bit-identical for a seed, different across seeds, balanced labels, values not
// clipped, and separable: the nearest-class-mean rule (a linear classifier) fitted on one half of the set
// classifies the other half almost perfectly.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>

#include "core/errors.hpp"
#include "kernels/data/dataset.hpp"

using namespace dts::data;

namespace {

bool same_bytes(const Dataset& a, const Dataset& b) {
  return a.x.size() == b.x.size() && a.y == b.y && std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("data::synthetic: the same seed gives the same bytes, another seed other bytes", "[data]") {
  const Dataset a = synthetic(42, 100, 1, 8, 8, 10);
  const Dataset b = synthetic(42, 100, 1, 8, 8, 10);
  const Dataset c = synthetic(43, 100, 1, 8, 8, 10);
  REQUIRE(same_bytes(a, b));
  REQUIRE_FALSE(std::memcmp(a.x.data(), c.x.data(), a.x.size() * sizeof(float)) == 0);
  REQUIRE(a.y != c.y);
  REQUIRE(a.n == 100);
  REQUIRE(a.c == 1);
  REQUIRE(a.h == 8);
  REQUIRE(a.w == 8);
  REQUIRE(a.classes == 10);
  REQUIRE(a.x.size() == 100 * 64);
}

TEST_CASE("data::synthetic: labels are balanced and shuffled, values are not clipped", "[data]") {
  const int n = GENERATE(7, 100, 1003);
  const int classes = GENERATE(2, 3, 10);
  const Dataset ds = synthetic(7, n, 3, 4, 4, classes);
  std::vector<int> count(static_cast<std::size_t>(classes), 0);
  for (const auto y : ds.y) {
    REQUIRE((y >= 0 && y < classes));
    ++count[static_cast<std::size_t>(y)];
  }
  const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
  REQUIRE(*hi - *lo <= 1);
  if (n >= 100) {
    bool round_robin = true;  // the shuffle must have moved something
    for (int i = 0; i < n; ++i) round_robin = round_robin && ds.y[static_cast<std::size_t>(i)] == i % classes;
    REQUIRE_FALSE(round_robin);
  }
  // Not clipped: Gaussian values fall on both sides of [0, 1].
  REQUIRE(*std::min_element(ds.x.begin(), ds.x.end()) < 0.0f);
  REQUIRE(*std::max_element(ds.x.begin(), ds.x.end()) > 1.0f);
}

TEST_CASE("data::synthetic: a nearest-class-mean classifier separates the classes", "[data]") {
  // (c, h, w) from MNIST-like 784 down to 8 dimensions, where sigma shrinks to keep the classes apart.
  const auto [c, h, w] = GENERATE(table<int, int, int>({{1, 28, 28}, {3, 4, 4}, {1, 2, 4}}));
  const int n = 2000, classes = 10;
  const Dataset ds = synthetic(2024, n, c, h, w, classes);
  const std::size_t d = ds.sample_size();
  // Fit class means on the first half.
  std::vector<double> mean(static_cast<std::size_t>(classes) * d, 0.0);
  std::vector<int> count(static_cast<std::size_t>(classes), 0);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n / 2); ++i) {
    const auto k = static_cast<std::size_t>(ds.y[i]);
    ++count[k];
    for (std::size_t j = 0; j < d; ++j) mean[k * d + j] += ds.sample(i)[j];
  }
  for (std::size_t k = 0; k < count.size(); ++k) {
    for (std::size_t j = 0; j < d; ++j) mean[k * d + j] /= count[k];
  }
  // Test on the second half.
  int correct = 0;
  for (std::size_t i = static_cast<std::size_t>(n / 2); i < static_cast<std::size_t>(n); ++i) {
    std::size_t best = 0;
    double best_dist = 1e300;
    for (std::size_t k = 0; k < count.size(); ++k) {
      double dist = 0;
      for (std::size_t j = 0; j < d; ++j) {
        const double diff = ds.sample(i)[j] - mean[k * d + j];
        dist += diff * diff;
      }
      if (dist < best_dist) best_dist = dist, best = k;
    }
    correct += static_cast<std::size_t>(ds.y[i]) == best;
  }
  const double accuracy = static_cast<double>(correct) / (n / 2);
  INFO("d = " << d << ", held-out accuracy " << accuracy);
  REQUIRE(accuracy > (d >= 32 ? 0.99 : 0.8));
}

TEST_CASE("data::synthetic: bad sizes are InputErrors", "[data]") {
  REQUIRE_THROWS_AS(synthetic(1, 0, 1, 2, 2, 10), dts::InputError);
  REQUIRE_THROWS_AS(synthetic(1, 10, 1, 0, 2, 10), dts::InputError);
  REQUIRE_THROWS_AS(synthetic(1, 10, 1, 2, 2, 1), dts::InputError);
}
