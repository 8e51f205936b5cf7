// Trainer::take_over_shards (MPCA's recovery, issue 18): the survivors' parts of a lost worker's shard cover it
// exactly once, each survivor keeps its own samples, and the new shard is read from the next epoch on.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <vector>

#include "kernels/data/dataset.hpp"
#include "kernels/model/trainer.hpp"

using namespace dts;

namespace {

// The rows of the next `steps` batches (batch 1), taking them.
std::vector<std::uint32_t> epoch_rows(model::Trainer& t, std::int64_t steps) {
  std::vector<float> params(t.num_params()), grads(t.num_params());
  t.init_params(params);
  std::vector<std::uint32_t> rows;
  for (std::int64_t s = 0; s < steps; ++s) {
    const auto next = t.next_rows();
    rows.insert(rows.end(), next.begin(), next.end());
    t.forward_backward(params, grads);
  }
  return rows;
}

}  // namespace

TEST_CASE("Trainer::take_over_shards: the survivors share the lost workers' shards, each sample once", "[kernels]") {
  const data::Dataset ds = data::synthetic(3, 41, 1, 1, 2, 2);
  // Ranks 1..4 are workers 0..3 (rank 0 a driver); ranks 2 and 4 are lost, ranks 1 and 3 survive.
  model::TrainerSetup setup{"logreg", model::Backend::kRef, true, &ds, 1, 9, {}, 4, 1};
  const std::vector<int> lost = {2, 4}, survivors = {1, 3};
  std::multiset<std::uint32_t> taken;
  for (std::size_t part = 0; part < survivors.size(); ++part) {
    const int rank = survivors[part];
    model::Trainer t(setup, rank);
    const auto own = data::shard_indices(ds.n, rank - 1, 4, 9);
    const auto first = epoch_rows(t, 3);  // mid-epoch
    // One lost rank first, then both: the second call starts again from the own shard.
    t.take_over_shards(std::vector<int>{2}, static_cast<int>(part), 2);
    const std::size_t count = t.take_over_shards(lost, static_cast<int>(part), 2);
    const auto rest = epoch_rows(t, static_cast<std::int64_t>(own.size()) - 3);  // epoch 0: the own shard
    std::set<std::uint32_t> epoch0(first.begin(), first.end());
    epoch0.insert(rest.begin(), rest.end());
    CHECK(epoch0 == std::set<std::uint32_t>(own.begin(), own.end()));
    t.next_rows();  // starts epoch 1
    CHECK(t.steps_per_epoch() == static_cast<std::int64_t>(own.size() + count));
    const auto next = epoch_rows(t, t.steps_per_epoch());  // epoch 1: own + taken over, each once
    std::set<std::uint32_t> seen(next.begin(), next.end());
    CHECK(seen.size() == next.size());
    for (const std::uint32_t r : own) CHECK(seen.erase(r) == 1);
    CHECK(seen.size() == count);
    taken.insert(seen.begin(), seen.end());
  }
  std::multiset<std::uint32_t> expected;
  for (const int r : lost) {
    const auto theirs = data::shard_indices(ds.n, r - 1, 4, 9);
    expected.insert(theirs.begin(), theirs.end());
  }
  CHECK(taken == expected);
}
