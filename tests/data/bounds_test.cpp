// The readers' bounds: a header is checked before what it promises is read, and every size is bounded by the
// header, by the file and by the limits (kMaxSampleValues, kMaxCifarRecords), so that a lying header, a gzip
// bomb or an endless file is refused quickly and without taking memory in proportion to what it claims.
// Also the stream entry points (the fuzz targets'): buffers give what files give.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>

#include "kernels/data/byte_stream.hpp"
#include "kernels/data/dataset.hpp"
#include "tests/data/idx_writer.hpp"

using namespace dts::data;
using namespace dts::data::testing;
using Catch::Matchers::Contains;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A CIFAR-10 record: the label, then 3072 pixel bytes.
Bytes cifar_records(const Bytes& labels) {
  Bytes b;
  for (const auto label : labels) {
    b.push_back(label);
    const Bytes px = pattern(3072, 5, label);
    b.insert(b.end(), px.begin(), px.end());
  }
  return b;
}

}  // namespace

TEST_CASE("data::read_idx: a header promising more than kMaxSampleValues is refused before any payload", "[data]") {
  const bool gz = GENERATE(false, true);
  TempDir dir;
  // 2^31 - 1 images of 28 x 28 promised, 16 pixels given; and 2^15 x 2^15 x 2 = 2^31 bytes, just over.
  for (const auto& [n, side] : {std::pair<std::uint32_t, std::uint32_t>{0x7fffffff, 28}, {2, 1u << 15}}) {
    write_file(dir / "images", idx3(n, side, side, pattern(16)), gz);
    write_file(dir / "labels", idx1({1, 2}), gz);
    const auto err = input_error_of([&] { read_idx(dir / "images", dir / "labels"); });
    INFO(err.what);
    REQUIRE(err.where == (dir / "images").string());
    REQUIRE_THAT(err.what, Contains("more than the limit of 1073741824"));
  }
}

TEST_CASE("data::read_idx: a gzip file whose header promises more than it can inflate to is refused", "[data]") {
  TempDir dir;
  // 100 MB promised by a gzip file of ~60 bytes: deflate gives at most 1032 bytes per byte.
  write_file(dir / "images.gz", idx3(100'000, 1000, 1, pattern(10)), true);
  write_file(dir / "labels", idx1(pattern(100'000, 1, 0)));
  const auto start = std::chrono::steady_clock::now();
  const auto err = input_error_of([&] { read_idx(dir / "images.gz", dir / "labels"); });
  REQUIRE_THAT(err.what, Contains("header promises 100000016 bytes") && Contains("1032 times its size"));
  REQUIRE(seconds_since(start) < 1.0);
}

TEST_CASE("data::read_idx: a gzip bomb after a small payload is refused after the payload", "[data]") {
  /* In details:
   *   o a valid IDX header and 64 images of 8 x 8, then 256 MiB of zeros (a 256 KB file)
   * Expectations
   *   o refused with "more than 1048576 bytes after" (it stops counting there): nothing past the payload and
   *     one more MiB is inflated, so it takes well under a second
   */
  TempDir dir;
  write_gzip_bomb(dir / "bomb.gz", idx3(64, 8, 8, pattern(64 * 64)), 256);
  write_file(dir / "labels", idx1(pattern(64, 1, 0)));
  const auto start = std::chrono::steady_clock::now();
  const auto err = input_error_of([&] { read_idx(dir / "bomb.gz", dir / "labels"); });
  INFO(err.what);
  REQUIRE_THAT(err.what, Contains("bomb.gz") && Contains("more than 1048576 bytes after the 4112"));
  REQUIRE(seconds_since(start) < 1.0);
}

TEST_CASE("data::read_idx: both headers are read before either payload", "[data]") {
  TempDir dir;
  // A truncated images file whose header disagrees with the labels': the count mismatch is found first.
  Bytes images = idx3(5, 2, 2, pattern(20));
  images.resize(images.size() - 3);
  write_file(dir / "images", images);
  write_file(dir / "labels", idx1({0, 1, 2, 3}));
  REQUIRE_THAT(input_error_of([&] { read_idx(dir / "images", dir / "labels"); }).what,
               Contains("4 labels but 5 images"));
}

TEST_CASE("data::read_idx: streams over buffers give what files give", "[data]") {
  const bool gz = GENERATE(false, true);
  TempDir dir;
  const Bytes images = idx3(6, 3, 2, pattern(36)), labels = idx1({5, 0, 9, 12, 1, 2});
  write_file(dir / "images", images, gz);
  write_file(dir / "labels", labels, gz);
  const Dataset from_files = read_idx(dir / "images", dir / "labels");
  const Bytes img_bytes = read_raw(dir / "images"), lab_bytes = read_raw(dir / "labels");
  ByteStream img = ByteStream::over_memory(img_bytes, "images");
  ByteStream lab = ByteStream::over_memory(lab_bytes, "labels");
  const Dataset from_memory = read_idx(img, lab);
  REQUIRE(from_memory.n == 6);
  REQUIRE(from_memory.classes == 13);
  REQUIRE(from_memory.y == from_files.y);
  REQUIRE(std::memcmp(from_memory.x.data(), from_files.x.data(), 36 * sizeof(float)) == 0);

  // A lower limit (a fuzz target's): 36 pixels pass a limit of 36, not one of 35. The streams are rewound.
  REQUIRE(read_idx(img, lab, 36).n == 6);
  REQUIRE_THAT(input_error_of([&] { read_idx(img, lab, 35); }).what, Contains("more than the limit of 35"));

  // Errors name the streams.
  ByteStream short_img = ByteStream::over_memory({img_bytes.data(), img_bytes.size() - (gz ? 12 : 1)}, "images");
  REQUIRE_THAT(input_error_of([&] { read_idx(short_img, lab); }).what, Contains("images: truncated"));
}

TEST_CASE("data::read_cifar10: a batch of more than kMaxCifarRecords records is refused unread", "[data]") {
  TempDir dir;
  // A sparse raw file of 60001 records: its size refuses it, nothing is read.
  const auto sparse = dir / "data_batch_1.bin";
  write_file(sparse, {});
  std::filesystem::resize_file(sparse, (kMaxCifarRecords + 1) * 3073);
  const auto start = std::chrono::steady_clock::now();
  auto err = input_error_of([&] { read_cifar10({sparse}); });
  REQUIRE_THAT(err.what, Contains(sparse.string()) && Contains("more than 60000 records"));
  REQUIRE(seconds_since(start) < 1.0);

  // 176 MiB of gzip zeros (valid records, all label 0): inflated once, into a small buffer, up to the limit.
  const auto bomb = dir / "bomb.bin";
  write_gzip_bomb(bomb, {}, 176);
  err = input_error_of([&] { read_cifar10({bomb}); });
  REQUIRE_THAT(err.what, Contains("CIFAR-10 batch of more than 184380000 bytes holds more than 60000 records"));
}

TEST_CASE("data::read_cifar10: streams over buffers, raw and gzip, give what files give", "[data]") {
  const Bytes raw = cifar_records({3, 9, 0});
  const Bytes gz = gzip_bytes(cifar_records({7}));
  std::vector<ByteStream> batches;
  batches.push_back(ByteStream::over_memory(raw, "batch 1"));
  batches.push_back(ByteStream::over_memory(gz, "batch 2"));
  const Dataset ds = read_cifar10(batches);
  REQUIRE(ds.n == 4);
  REQUIRE(ds.y == std::vector<std::int32_t>{3, 9, 0, 7});
  REQUIRE(ds.x[3 * 3072 + 5] == static_cast<float>(pattern(3072, 5, 7)[5]) / 255.0f);

  // A lower limit: 2 records' pixels allow 2 records per batch and in all.
  REQUIRE_THAT(input_error_of([&] { read_cifar10(batches, 2 * 3072); }).what,
               Contains("batch 1") && Contains("holds more than 2 records (the limit)"));
  std::vector<ByteStream> two;
  two.push_back(ByteStream::over_memory({raw.data(), 3073}, "one"));
  two.push_back(ByteStream::over_memory(gz, "two"));
  REQUIRE(read_cifar10(two, 2 * 3072).n == 2);

  // A gzip batch with data after its stream: refused while it is sized.
  Bytes padded = gz;
  padded.push_back(0);
  std::vector<ByteStream> bad;
  bad.push_back(ByteStream::over_memory(padded, "padded"));
  REQUIRE_THAT(input_error_of([&] { read_cifar10(bad); }).what, Contains("padded: data after the end"));
}

TEST_CASE("data::synthetic: a set of more than kMaxSampleValues values is an InputError, not a bad_alloc", "[data]") {
  // 2e9 samples of 1 x 1024 x 1024: on a plain allocation, a std::bad_alloc.
  auto err = input_error_of([] { synthetic(1, 2'000'000'000, 1, 1024, 1024, 2); });
  REQUIRE_THAT(err.what, Contains("samples") && Contains("more than the limit of 1073741824"));
  // Class means: 100000 classes of 4096 x 4096 values.
  err = input_error_of([] { synthetic(1, 10, 1, 4096, 4096, 100'000); });
  REQUIRE_THAT(err.what, Contains("class means"));
  // Ints whose product overflows 64 bits.
  REQUIRE_THROWS_AS(synthetic(1, 1 << 30, 1 << 30, 1 << 30, 1 << 30, 2), dts::InputError);
}
