// ByteStream: the same bytes from a file and from memory, raw and gzip (one member or several), rewound; every
// kind of file that is not a regular one refused at once without being opened (a FIFO would block, /dev/zero
// never ends); a gzip stream cut short, corrupt or followed by other data refused; max_size() bounds gzip by
// deflate's 1032:1.
#include "kernels/data/byte_stream.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "tests/data/idx_writer.hpp"

using namespace dts::data;
using namespace dts::data::testing;
using Catch::Matchers::Contains;

namespace {

// Everything the stream holds, read in chunks of `chunk` bytes.
Bytes read_all(ByteStream& s, std::size_t chunk) {
  Bytes out, buf(chunk);
  while (const std::size_t got = s.read(buf)) out.insert(out.end(), buf.begin(), buf.begin() + got);
  return out;
}

}  // namespace

TEST_CASE("data::ByteStream: a file and a buffer give the same bytes, raw and gzip, after a rewind too", "[data]") {
  const bool gz = GENERATE(false, true);
  const std::size_t chunk = GENERATE(1, 7, 4096, 1 << 20);
  TempDir dir;
  const Bytes bytes = pattern(100'000, 131, 7);
  write_file(dir / "f", bytes, gz);
  const Bytes stored = read_raw(dir / "f");

  ByteStream file = ByteStream::open_file(dir / "f");
  ByteStream mem = ByteStream::over_memory(stored, "in memory");
  for (ByteStream* s : {&file, &mem}) {
    INFO(s->name() << " chunk " << chunk);
    REQUIRE(s->gzip() == gz);
    REQUIRE(s->stored_size() == stored.size());
    REQUIRE(s->max_size() == stored.size() * (gz ? kMaxDeflateRatio : 1));
    REQUIRE(read_all(*s, chunk) == bytes);
    Bytes more(8);
    REQUIRE(s->read(more) == 0);
    s->rewind();
    REQUIRE(read_all(*s, chunk) == bytes);
  }
}

TEST_CASE("data::ByteStream: gzip members one after another read as one stream; other data after is an error",
          "[data]") {
  Bytes two = gzip_bytes(pattern(5000));
  const Bytes second = gzip_bytes(pattern(3000, 3, 1));
  two.insert(two.end(), second.begin(), second.end());
  ByteStream s = ByteStream::over_memory(two, "two members");
  Bytes want = pattern(5000);
  const Bytes tail = pattern(3000, 3, 1);
  want.insert(want.end(), tail.begin(), tail.end());
  REQUIRE(read_all(s, 1000) == want);

  Bytes padded = gzip_bytes(pattern(5000));
  padded.push_back(0);
  ByteStream p = ByteStream::over_memory(padded, "padded");
  const auto err = input_error_of([&] { read_all(p, 1000); });
  REQUIRE(err.where == "padded");
  REQUIRE_THAT(err.what, Contains("data after the end of the gzip stream") && Contains("5000"));
}

TEST_CASE("data::ByteStream: a gzip buffer cut short or corrupted is an InputError", "[data]") {
  const Bytes gz = gzip_bytes(pattern(200'000, 131, 7));
  for (const std::size_t keep : {gz.size() / 2, gz.size() - 8, gz.size() - 1, std::size_t{2}}) {
    ByteStream s = ByteStream::over_memory({gz.data(), keep}, "cut");
    const auto err = input_error_of([&] { read_all(s, 4096); });
    INFO("kept " << keep << " of " << gz.size() << ": " << err.what);
    REQUIRE_THAT(err.what, Contains("cut: truncated gzip stream"));
  }
  Bytes bad = gz;
  bad[bad.size() - 6] ^= 0x01;  // inside the CRC-32
  ByteStream s = ByteStream::over_memory(bad, "bad crc");
  REQUIRE_THAT(input_error_of([&] { read_all(s, 4096); }).what, Contains("bad gzip stream: incorrect data check"));
}

TEST_CASE("data::ByteStream: a FIFO, a device or a directory is refused at once, unopened", "[data]") {
  TempDir dir;
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::create_symlink("/dev/zero", dir / "zero-link");
  const std::pair<std::filesystem::path, const char*> cases[] = {{dir / "fifo", "is a FIFO"},
                                                                 {"/dev/zero", "is a character device"},
                                                                 {dir / "zero-link", "is a character device"},
                                                                 {dir / "sub", "is a directory"},
                                                                 {dir / "none", "no such file"}};
  for (const auto& [path, message] : cases) {
    const auto start = std::chrono::steady_clock::now();
    const auto err = input_error_of([&, path = path] { ByteStream::open_file(path); });
    INFO(err.what);
    REQUIRE(err.where == path.string());
    REQUIRE_THAT(err.what, Contains(message));
    REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  }
}
