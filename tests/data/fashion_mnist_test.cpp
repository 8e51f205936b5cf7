// The real Fashion-MNIST from Debian's dataset-fashion-mnist package, when installed (else a WARN and return): the
// 60000-image training set and 10000-image test set, 28x28, 10 balanced classes, pixels in [0, 1].
// Also a speed sanity check: inflating the 26 MB training images must take about a second (buffered
// gzread), not the minutes a byte-at-a-time reader needs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "kernels/data/dataset.hpp"

using namespace dts::data;

namespace {

const std::filesystem::path kDir = "/usr/share/datasets/fashion-mnist";

void check_set(const Dataset& ds, int n) {
  REQUIRE(ds.n == n);
  REQUIRE(ds.c == 1);
  REQUIRE(ds.h == 28);
  REQUIRE(ds.w == 28);
  REQUIRE(ds.classes == 10);
  REQUIRE(ds.x.size() == static_cast<std::size_t>(n) * 784);
  std::vector<int> histogram(10, 0);
  for (const auto y : ds.y) ++histogram[static_cast<std::size_t>(y)];
  REQUIRE(histogram == std::vector<int>(10, n / 10));
  const auto [lo, hi] = std::minmax_element(ds.x.begin(), ds.x.end());
  REQUIRE(*lo == 0.0f);
  REQUIRE(*hi == 1.0f);
}

}  // namespace

TEST_CASE("data::read_idx: real Fashion-MNIST, train and t10k", "[data]") {
  if (!std::filesystem::exists(kDir / "train-images-idx3-ubyte.gz")) {
    WARN("skipped: dataset-fashion-mnist not installed");  // Catch2 v2.13 has no SKIP()
    return;
  }

  const auto start = std::chrono::steady_clock::now();
  const Dataset train = read_idx(kDir / "train-images-idx3-ubyte.gz", kDir / "train-labels-idx1-ubyte.gz");
  const double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("read_idx: Fashion-MNIST train (60000 images, 26 MB gzip) in %.3f s\n", train_s);
  check_set(train, 60000);
  CHECK(train.name == "train-images-idx3-ubyte");
  // Generous bound for a loaded machine or a Debug build; about 0.3 s in Release on one core.
  CHECK(train_s < 20.0);

  const Dataset test = read_idx(kDir / "t10k-images-idx3-ubyte.gz", kDir / "t10k-labels-idx1-ubyte.gz");
  check_set(test, 10000);
}
