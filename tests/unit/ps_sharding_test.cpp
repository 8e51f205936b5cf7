// The parameter server's key sharding (algorithms/ps_sharding.hpp): MXNet's kvstore rule. Every float is owned
// by exactly one server; a big block's slices are within one float of each other; a small one goes whole to
// server (key * 9973) mod S; gather and scatter move a server's pieces and only them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "algorithms/ps_sharding.hpp"

namespace dts {
namespace {

std::vector<model::ParamBlock> blocks_of(const std::vector<std::size_t>& sizes) {
  std::vector<model::ParamBlock> out;
  std::size_t at = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    out.push_back({"block", at, sizes[k]});
    at += sizes[k];
  }
  return out;
}

TEST_CASE("ps_sharding: every float has one server; big blocks sliced evenly, small ones whole", "[ps]") {
  const int S = GENERATE(1, 2, 3, 4, 7, 16);
  const std::vector<std::size_t> sizes = {34944,         614656, 885120,  1327488, 884992,
                                          37752832 / 64, 1000,   1000000, 999999,  5};
  const std::size_t bound = 1'000'000;  // MXNET_KVSTORE_BIGARRAY_BOUND: 999999 whole, 1000000 sliced
  const auto blocks = blocks_of(sizes);
  const std::size_t n = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
  const PsSharding sh(blocks, n, S, bound);
  std::vector<int> owner(n, -1);
  std::size_t total = 0;
  for (int s = 0; s < S; ++s) {
    std::size_t floats = 0;
    for (const auto& p : sh.of(s)) {
      REQUIRE(p.server == s);
      std::size_t taken = 0;  // floats already owned (counted, not REQUIREd one by one: millions of them)
      for (std::size_t i = p.offset; i < p.offset + p.count; ++i) {
        taken += owner[i] != -1 ? 1 : 0;
        owner[i] = s;
      }
      REQUIRE(taken == 0);  // owned once
      floats += p.count;
    }
    REQUIRE(sh.floats(s) == floats);
    total += floats;
    REQUIRE((floats > 0) == (std::find(sh.active().begin(), sh.active().end(), s) != sh.active().end()));
  }
  REQUIRE(total == n);
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const auto& b = blocks[k];
    if (b.size < bound) {  // whole, on MXNet's server for key k
      const int s = static_cast<int>((k * 9973) % static_cast<std::size_t>(S));
      REQUIRE(std::all_of(owner.begin() + b.offset, owner.begin() + b.offset + b.size, [&](int o) { return o == s; }));
      continue;
    }
    std::vector<std::size_t> per(static_cast<std::size_t>(S), 0);  // sliced: S contiguous slices in server order
    REQUIRE(std::is_sorted(owner.begin() + b.offset, owner.begin() + b.offset + b.size));
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) ++per[static_cast<std::size_t>(owner[i])];
    const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
    REQUIRE(*hi - *lo <= 1);
    REQUIRE(*lo > 0);
  }
}

TEST_CASE("ps_sharding: MXNet's bound: a block of exactly bigarray_bound floats is sliced", "[ps]") {
  const PsSharding sh(blocks_of({10, 9, 3}), 22, 2, 10);
  // key 0 (10 floats) sliced 5 + 5; key 1 (9 < 10) whole to 9973 mod 2 = 1; key 2 to 2 * 9973 mod 2 = 0.
  REQUIRE(sh.pieces().size() == 4);
  REQUIRE(sh.of(0).size() == 2);
  REQUIRE(sh.of(0)[0].offset == 0);
  REQUIRE(sh.of(0)[0].count == 5);
  REQUIRE(sh.of(0)[1].offset == 19);
  REQUIRE(sh.of(1)[0].offset == 5);
  REQUIRE(sh.of(1)[1].offset == 10);
  REQUIRE(sh.floats(0) == 8);
  REQUIRE(sh.floats(1) == 14);
}

TEST_CASE("ps_sharding: gather and scatter move a server's pieces, packed in vector order", "[ps]") {
  const PsSharding sh(blocks_of({4, 2, 6, 1}), 13, 3, 5);
  std::vector<float> full(13);
  std::iota(full.begin(), full.end(), 0.0f);
  for (int s = 0; s < 3; ++s) {
    std::vector<float> packed(sh.floats(s), -1.0f), back(13, -1.0f), expected;
    for (const auto& p : sh.of(s)) {
      for (std::size_t i = p.offset; i < p.offset + p.count; ++i) expected.push_back(full[i]);
    }
    sh.gather(s, dts::ConstSlice(std::span<const float>(full)), std::span<float>(packed));
    REQUIRE(packed == expected);
    sh.scatter(s, dts::ConstSlice(std::span<const float>(packed)), std::span<float>(back));
    for (std::size_t i = 0; i < 13; ++i) {
      const bool mine = std::find(expected.begin(), expected.end(), full[i]) != expected.end();
      REQUIRE(back[i] == (mine ? full[i] : -1.0f));
    }
  }
  // No blocks: the whole vector is key 0, on server 0 below the bound.
  const PsSharding one({}, 13, 3, 100);
  REQUIRE(one.active() == std::vector<int>{0});
}

}  // namespace
}  // namespace dts
