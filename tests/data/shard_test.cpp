// Sharding and BatchStream: shards are disjoint, cover [0, n) and differ in size by at most one; a stream
// is deterministic for its seed, visits every sample of its shard exactly once per epoch (minus the dropped
// partial batch), copies the right pixels and labels, and refuses a shard smaller than one batch.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <set>

#include "core/errors.hpp"
#include "kernels/data/dataset.hpp"

using namespace dts::data;
using Catch::Matchers::Contains;

namespace {

// n samples of shape (1, 1, 2): sample i holds (i, -i) and label i % 3, so a batch tells which it holds.
Dataset indexed_dataset(int n) {
  Dataset ds;
  ds.name = "indexed";
  ds.n = n;
  ds.c = 1, ds.h = 1, ds.w = 2;
  ds.classes = 3;
  for (int i = 0; i < n; ++i) {
    ds.x.push_back(static_cast<float>(i));
    ds.x.push_back(static_cast<float>(-i));
    ds.y.push_back(i % 3);
  }
  return ds;
}

// The sample indices of `steps` batches, checking pixels and labels against indexed_dataset().
std::vector<std::uint32_t> draw(BatchStream& s, const Dataset& ds, std::size_t steps) {
  const auto batch = static_cast<std::size_t>(s.batch());
  std::vector<float> x(batch * 2);
  std::vector<std::int32_t> y(batch);
  std::vector<std::uint32_t> seen;
  for (std::size_t step = 0; step < steps; ++step) {
    s.next(x, y);
    for (std::size_t b = 0; b < batch; ++b) {
      const auto i = static_cast<std::uint32_t>(x[2 * b]);
      REQUIRE(x[2 * b + 1] == -x[2 * b]);
      REQUIRE(y[b] == ds.y[i]);
      seen.push_back(i);
    }
  }
  return seen;
}

}  // namespace

TEST_CASE("data::shard_indices: disjoint, covering, balanced, deterministic", "[data]") {
  const auto [n, world] = GENERATE(table<int, int>({{10, 3}, {7, 7}, {5, 8}, {1, 1}, {0, 2}, {60000, 16}}));
  // Gather every rank's shard; equal across calls with the same seed.
  std::vector<std::uint32_t> all;
  std::size_t smallest = SIZE_MAX, largest = 0;
  for (int rank = 0; rank < world; ++rank) {
    const auto shard = shard_indices(n, rank, world, 42);
    REQUIRE(shard == shard_indices(n, rank, world, 42));
    smallest = std::min(smallest, shard.size());
    largest = std::max(largest, shard.size());
    all.insert(all.end(), shard.begin(), shard.end());
  }
  REQUIRE(largest - smallest <= 1);
  std::sort(all.begin(), all.end());
  std::vector<std::uint32_t> expected(static_cast<std::size_t>(n));
  std::iota(expected.begin(), expected.end(), 0u);
  REQUIRE(all == expected);  // disjoint and covering at once
  if (n >= 100) REQUIRE(shard_indices(n, 0, world, 42) != shard_indices(n, 0, world, 43));
}

TEST_CASE("data::BatchStream: every sample once per epoch, same seed same order", "[data]") {
  const Dataset ds = indexed_dataset(50);
  const auto shard = shard_indices(ds.n, 1, 2, 7);  // 25 samples
  REQUIRE(shard.size() == 25);
  const int batch = GENERATE(1, 5, 25);
  BatchStream a(ds, shard, batch, 99), b(ds, shard, batch, 99), other(ds, shard, batch, 100);
  REQUIRE(a.steps_per_epoch() == 25 / static_cast<std::size_t>(batch));
  // Three epochs: a and b agree step by step; `other` (another seed) does not; each epoch is the shard.
  const std::set<std::uint32_t> shard_set(shard.begin(), shard.end());
  std::vector<std::uint32_t> previous;
  for (int epoch = 0; epoch < 3; ++epoch) {
    const auto seen = draw(a, ds, a.steps_per_epoch());
    REQUIRE(a.epoch() == epoch);
    REQUIRE(seen == draw(b, ds, b.steps_per_epoch()));
    const auto seen_other = draw(other, ds, other.steps_per_epoch());
    if (batch < 25) REQUIRE(seen != previous);  // reshuffled between epochs
    REQUIRE(std::set<std::uint32_t>(seen.begin(), seen.end()) == shard_set);
    REQUIRE(seen_other != seen);
    previous = seen;
  }
}

TEST_CASE("data::BatchStream: drops the last partial batch", "[data]") {
  const Dataset ds = indexed_dataset(30);
  std::vector<std::uint32_t> shard(23);
  std::iota(shard.begin(), shard.end(), 3u);  // samples 3..25
  // 23 samples, batch 4: 5 steps per epoch, 3 samples dropped each epoch (a different 3 each time).
  BatchStream s(ds, shard, 4, 1);
  REQUIRE(s.steps_per_epoch() == 5);  // 20 of 23 samples per epoch
  for (int epoch = 0; epoch < 4; ++epoch) {
    const auto seen = draw(s, ds, 5);
    REQUIRE(s.epoch() == epoch);
    const std::set<std::uint32_t> distinct(seen.begin(), seen.end());
    REQUIRE(distinct.size() == 20);
    REQUIRE(*distinct.begin() >= 3);
    REQUIRE(*distinct.rbegin() <= 25);
  }
}

TEST_CASE("data::BatchStream: a shard smaller than one batch is an InputError", "[data]") {
  const Dataset ds = indexed_dataset(10);
  REQUIRE_THROWS_WITH(BatchStream(ds, {1, 2, 3}, 4, 0), Contains("shard of 3 samples is smaller than batch 4"));
  REQUIRE_THROWS_AS(BatchStream(ds, {}, 1, 0), dts::InputError);
  REQUIRE_THROWS_AS(BatchStream(ds, {1, 2}, 0, 0), dts::InputError);
  REQUIRE_NOTHROW(BatchStream(ds, {1, 2, 3, 4}, 4, 0));
}

TEST_CASE("data::BatchStream: reshard takes effect at the next epoch, whole", "[data]") {
  const Dataset ds = indexed_dataset(40);
  const auto own = shard_indices(ds.n, 0, 4, 7), lost = shard_indices(ds.n, 1, 4, 7);  // 10 samples each
  BatchStream s(ds, own, 2, 5);
  const auto first = draw(s, ds, 2);  // mid-epoch
  std::vector<std::uint32_t> grown = own;
  grown.insert(grown.end(), lost.begin(), lost.begin() + 4);
  s.reshard(grown);
  const auto rest = draw(s, ds, 3);  // the rest of epoch 0: still the own shard
  std::set<std::uint32_t> epoch0(first.begin(), first.end());
  epoch0.insert(rest.begin(), rest.end());
  CHECK(epoch0 == std::set<std::uint32_t>(own.begin(), own.end()));
  CHECK(s.epoch() == 0);
  const auto next = draw(s, ds, 7);  // epoch 1: the 14 samples, each once
  CHECK(s.epoch() == 1);
  CHECK(s.steps_per_epoch() == 7);
  CHECK(next.size() == 14);
  CHECK(std::set<std::uint32_t>(next.begin(), next.end()) == std::set<std::uint32_t>(grown.begin(), grown.end()));
}
