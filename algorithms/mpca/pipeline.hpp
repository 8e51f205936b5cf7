// MPCA SGD's driver pipeline (papers/mpca_sgd.md §4.2): which shard each driver cycle reduces, prepares and
// broadcasts, and the schedules of beta, alpha and gamma (§4.3, §4.5, §4.7). Pure: the driver follows it, the
// tests check it.
#pragma once

#include <cstdint>
#include <vector>

namespace dts::mpca {

// The exchange patterns of §4.2 (the synchronous one is the `sparknet_avg` algorithm):
//   3  reduce shard c mod S while preparing the shard reduced in cycle c - 1 and broadcasting the one
//      prepared in c - 1 (reduced in c - 2), all at once; needs S >= 3;
//   2  prepare the shard reduced in cycle c - 1 first (not overlapped), then reduce shard c mod S while
//      broadcasting it; needs S >= 2;
//   1  reduce shard c mod S, then prepare it, then broadcast it: the cluster either reduces or broadcasts.
struct Cycle {
  int reduce = -1, prepare = -1, broadcast = -1;  // shards; -1: none this cycle
  enum class Order { kAtOnce, kPrepareFirst, kInTurn } order = Order::kAtOnce;
};
Cycle cycle_of(int phases, int shards, std::int64_t c);

// Which phases each shard is in, as the driver enters and leaves them: a shard entering a phase while in another
// counts as an overlap (the pipeline's invariant is that none happen).
class PhaseBook {
 public:
  explicit PhaseBook(int shards) : busy_(static_cast<std::size_t>(shards), 0) {}
  void begin(int shard);
  void end(int shard);
  std::int64_t overlaps() const { return overlaps_; }

 private:
  std::vector<int> busy_;
  std::int64_t overlaps_ = 0;
};

struct Schedules {
  double beta = 0.9;  // final; from 1 down by a constant factor over beta_ramp_cycles (§4.5)
  std::int64_t beta_ramp_cycles = 20;
  double alpha = 0.05, alpha_high = 0.5;  // §4.7: 0, then alpha_high, then an exponential decay to alpha
  double alpha_zero_rounds = 3, alpha_high_rounds = 1, alpha_decay_rounds = 5;  // rounds of S cycles
  double gamma = 0.7;  // §4.3, reached after gamma_ramp_cycles (0: from the start)
  std::int64_t gamma_ramp_cycles = 0;
  int shards = 3;

  // beta_c = max(beta, beta^(c / ramp)): 1 at c = 0.
  double beta_at(std::int64_t c) const;
  double alpha_at(std::int64_t c) const;
  // gamma * min(1, c / ramp), linearly.
  double gamma_at(std::int64_t c) const;
};

}  // namespace dts::mpca
