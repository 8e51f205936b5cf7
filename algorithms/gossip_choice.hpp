// Who communicates with whom at an update of the gossip family (Elastic Gossip, pull and push Gossiping SGD,
// GoSGD; papers/elastic_gossip.md §4.6-4.7 and §5), one description for every algorithm, mode and backend.
// Worker i initiates at update u (the update counter starts at 1, as the thesis's code) when the period divides
// u and its own Bernoulli(probability) draw is true; it then picks one peer uniformly among the others by the
// code's formula peer = (i + 1 + floor(U (W - 1))) mod W. The draws come from kernels/rng.hpp keyed on
// (seed, rank, update), so a choice never depends on the order of events, and any worker can compute any
// other's (the `shared` synchronisation mode).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts {

struct GossipSchedule {
  double probability = 1.0;  // p: each worker's chance to initiate at an update
  std::int64_t period = 1;   // tau: initiate only at updates that tau divides
  std::uint64_t seed = 1;
};

// Worker `rank`'s peer at update `update` (>= 1) among W workers, or -1 when it does not initiate.
Rank gossip_choice(const GossipSchedule& s, int W, Rank rank, std::int64_t update);
// Every worker's choice at `update`.
std::vector<Rank> gossip_choices(const GossipSchedule& s, int W, std::int64_t update);
// K_i, the set of i's partners at one update: its own choice and every worker that chose it, ascending, each
// once (a mutual choice counts once).
std::vector<Rank> gossip_partners(std::span<const Rank> choices, Rank i);
// The workers that chose i, ascending.
std::vector<Rank> gossip_choosers(std::span<const Rank> choices, Rank i);

// Every worker's choice of one update, held by the ranks using it (W ranks each holding their own copy of W
// choices while they exchange: 1 GB at 16,384).
using Choices = std::shared_ptr<const std::vector<Rank>>;

// gossip_choices of the last few updates, shared by the ranks of one process (every rank of a simulation), so
// that W ranks do not each draw the same W choices. Ranks far apart in updates only draw again.
class GossipChoiceCache {
 public:
  explicit GossipChoiceCache(GossipSchedule s) : s_(s) {}
  Choices choices(int W, std::int64_t update);

 private:
  static constexpr std::int64_t kKeep = 64;
  GossipSchedule s_;
  std::map<std::int64_t, Choices> by_update_;
};

}  // namespace dts
