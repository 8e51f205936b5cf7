// FNV-1a: the published 64-bit test vectors, the same hash over bytes given as text or as a byte span, and the
// folding of whole values that Group uses.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "core/hash.hpp"

namespace dts {
namespace {

TEST_CASE("fnv1a: the reference values of FNV-1a 64", "[core][hash]") {
  // From the FNV authors' test suite (isthe.com/chongo/src/fnv/test_fnv.c, fnv1a_64).
  STATIC_REQUIRE(fnv1a("") == 0xcbf29ce484222325ull);
  STATIC_REQUIRE(fnv1a("a") == 0xaf63dc4c8601ec8cull);
  STATIC_REQUIRE(fnv1a("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("fnv1a: bytes hash alike as text and as a byte span, and a hash continues from where it stopped",
          "[core][hash]") {
  const std::string text = "dropout\xff\x01";
  const auto bytes = std::as_bytes(std::span<const char>(text.data(), text.size()));
  CHECK(fnv1a(bytes) == fnv1a(text));
  CHECK(fnv1a(std::string_view(text).substr(3), fnv1a(std::string_view(text).substr(0, 3))) == fnv1a(text));
  CHECK(fnv1a("dropout") != fnv1a("shuffle"));
}

TEST_CASE("fnv1a_step: a whole value folded at once, as Group folds its ranks", "[core][hash]") {
  CHECK(fnv1a_step(kFnv1aBasis, 'a') == fnv1a("a"));
  const std::uint64_t h = fnv1a_step(fnv1a_step(kFnv1aBasis, 1), 2);
  CHECK(h == (((kFnv1aBasis ^ 1) * kFnv1aPrime) ^ 2) * kFnv1aPrime);
  CHECK(h != fnv1a_step(fnv1a_step(kFnv1aBasis, 2), 1));              // the order counts
  CHECK(fnv1a_step(kFnv1aBasis, 256) != fnv1a_step(kFnv1aBasis, 0));  // wider than a byte: no truncation
}

}  // namespace
}  // namespace dts
