// Test helpers for tests/data: a self-removing temporary directory, writers for small IDX and arbitrary byte
// files, raw or gzip (through zlib's gzopen/gzwrite, as real data sets are compressed), gzip in memory and
// gzip bombs, and input_error_of() to inspect a thrown dts::InputError. Header-only; every helper REQUIREs its own
// success so that a failed write shows up at its call site.
#pragma once

#include <stdlib.h>  // mkdtemp
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace dts::data::testing {

using Bytes = std::vector<std::uint8_t>;

// A fresh directory under the system temp dir, removed (with its contents) when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dts_data_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, const Bytes& bytes, bool gzip = false) {
  if (gzip) {
    gzFile f = gzopen(path.string().c_str(), "wb");
    REQUIRE(f != nullptr);
    if (!bytes.empty()) REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) > 0);
    REQUIRE(gzclose(f) == Z_OK);
  } else {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
}

// `bytes` as one gzip member (deflate level 9), in memory.
inline Bytes gzip_bytes(const Bytes& bytes) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  Bytes out(deflateBound(&zs, static_cast<uLong>(bytes.size())));
  zs.next_in = const_cast<Bytef*>(bytes.data());
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A gzip bomb: `head` as one gzip member, then `zero_mib` MiB of zero bytes in members of 16 MiB (a member
// each ~16 KB: members concatenate as gzip files do, so 4 GiB of zeros are a 4 MB file written at once).
inline void write_gzip_bomb(const std::filesystem::path& path, const Bytes& head, std::size_t zero_mib) {
  std::ofstream out(path, std::ios::binary);
  const auto put = [&](const Bytes& b) {
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  if (!head.empty()) put(gzip_bytes(head));
  const Bytes member = gzip_bytes(Bytes(std::min<std::size_t>(zero_mib, 16) << 20, 0));
  for (std::size_t mib = 0; mib < zero_mib; mib += 16) put(member);
  REQUIRE(out.good());
}

inline Bytes read_raw(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void put_be32(Bytes& b, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<std::uint8_t>(v >> shift));
}

// IDX3 unsigned-byte images: magic 0x00000803, n, h, w, then n*h*w pixels.
inline Bytes idx3(std::uint32_t n, std::uint32_t h, std::uint32_t w, const Bytes& pixels) {
  Bytes b;
  put_be32(b, 0x00000803);
  put_be32(b, n);
  put_be32(b, h);
  put_be32(b, w);
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

// IDX1 unsigned-byte labels: magic 0x00000801, n, then n labels.
inline Bytes idx1(const Bytes& labels) {
  Bytes b;
  put_be32(b, 0x00000801);
  put_be32(b, static_cast<std::uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

// Deterministic pixel bytes covering 0..255 (pattern, not randomness: the tests compare exact values).
inline Bytes pattern(std::size_t count, unsigned mul = 37, unsigned add = 11) {
  Bytes b(count);
  for (std::size_t i = 0; i < count; ++i) b[i] = static_cast<std::uint8_t>((i * mul + add) & 0xffu);
  return b;
}

// Runs f, which must throw dts::InputError; returns (where, what) for the caller to inspect.
struct CaughtInputError {
  std::string where, what;
};
template <typename F>
CaughtInputError input_error_of(F&& f) {
  try {
    f();
  } catch (const dts::InputError& e) {
    return {e.where(), e.what()};
  }
  FAIL("expected dts::InputError, none thrown");
  return {};
}

}  // namespace dts::data::testing
