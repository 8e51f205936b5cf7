// CIFAR-10 binary reader: batches of 1 + 3072 byte records read back exactly and concatenated in order;
// a size that is not a positive multiple of 3073, a label >= 10 or a missing batch is an InputError
// naming the file.
#include <catch2/catch.hpp>

#include "kernels/data/dataset.hpp"
#include "tests/data/idx_writer.hpp"

using namespace dts::data;
using namespace dts::data::testing;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kPixels = 3072;

// Records with the given labels; pixel bytes follow a pattern offset by `salt` so batches differ.
Bytes cifar_batch(const Bytes& labels, unsigned salt) {
  Bytes b;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    b.push_back(labels[r]);
    const Bytes px = pattern(kPixels, 7 + 2 * static_cast<unsigned>(r), salt);
    b.insert(b.end(), px.begin(), px.end());
  }
  return b;
}

}  // namespace

TEST_CASE("data::read_cifar10: batches read back exactly, in order", "[data]") {
  TempDir dir;
  const Bytes b1 = cifar_batch({0, 9, 5}, 1), b2 = cifar_batch({7, 2}, 2);
  // The second batch gzip-compressed: the reader must not care.
  write_file(dir / "data_batch_1.bin", b1);
  write_file(dir / "data_batch_2.bin", b2, /*gzip=*/true);

  const Dataset ds = read_cifar10({dir / "data_batch_1.bin", dir / "data_batch_2.bin"});
  REQUIRE(ds.n == 5);
  REQUIRE(ds.c == 3);
  REQUIRE(ds.h == 32);
  REQUIRE(ds.w == 32);
  REQUIRE(ds.classes == 10);
  REQUIRE(ds.y == std::vector<std::int32_t>{0, 9, 5, 7, 2});
  REQUIRE(ds.x.size() == 5 * kPixels);
  for (int i = 0; i < ds.n; ++i) {
    const Bytes& src = i < 3 ? b1 : b2;
    const std::size_t rec = static_cast<std::size_t>(i < 3 ? i : i - 3) * (kPixels + 1);
    const auto sample = ds.sample(static_cast<std::size_t>(i));
    for (std::size_t p = 0; p < kPixels; ++p) REQUIRE(sample[p] == static_cast<float>(src[rec + 1 + p]) / 255.0f);
  }
}

TEST_CASE("data::read_cifar10: a size that is not a multiple of 3073 is an InputError", "[data]") {
  TempDir dir;
  const auto good = dir / "good.bin", bad = dir / "bad.bin";
  write_file(good, cifar_batch({1}, 0));
  // Two records less one byte (6145 bytes) after a good batch: the error names the bad file, not the first.
  Bytes b = cifar_batch({1, 2}, 0);
  b.pop_back();
  write_file(bad, b);
  auto err = input_error_of([&] { read_cifar10({good, bad}); });
  REQUIRE(err.where == bad.string());
  REQUIRE_THAT(err.what, Contains(bad.string()) && Contains("6145") && Contains("3073"));

  write_file(bad, {});
  err = input_error_of([&] { read_cifar10({bad}); });
  REQUIRE_THAT(err.what, Contains(bad.string()) && Contains("0 bytes"));
}

TEST_CASE("data::read_cifar10: a label >= 10 or a missing batch is an InputError", "[data]") {
  TempDir dir;
  const auto path = dir / "batch.bin";
  write_file(path, cifar_batch({3, 10}, 0));
  auto err = input_error_of([&] { read_cifar10({path}); });
  REQUIRE_THAT(err.what, Contains(path.string()) && Contains("label 10 out of range") && Contains("record 1"));

  err = input_error_of([&] { read_cifar10({dir / "test_batch.bin"}); });
  REQUIRE(err.where == (dir / "test_batch.bin").string());
  REQUIRE_THROWS_AS(read_cifar10({}), dts::InputError);
}
