// GossipGraD's partner schedule (papers/gossipgrad.md §4-5), one description for both backends and the tests.
// Step t of a node uses step k = t mod L of a round, L = ceil(log2 p), in the virtual rank space of
// communicator m = floor(t / L) mod p (0 without rotation): with v the node's virtual rank,
//   dissemination  send to (v + 2^k) mod p, receive from (v - 2^k) mod p
//   hypercube      send to and receive from v XOR 2^k (p a power of two only).
// Communicator 0 is the identity; communicator m >= 1 is a random permutation of the ranks drawn from
// (seed, m) alone. The authors' code shuffles cumulatively (each permutation shuffles the previous one),
// which gives the same distribution of each permutation but needs all earlier ones; drawing each from its
// own seed lets a communicator be built when first needed. Every step is a permutation of the ranks, so
// every node sends one message and receives one.
// p not a power of two (an extension; the paper and the code refuse it): dissemination with ceil(log2 p)
// steps, still one message out and one in per step, but one round no longer gives the exact mean.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts {

enum class GossipPattern : std::uint8_t { kDissemination, kHypercube };

struct GossipPartners {
  Rank send_to = -1, recv_from = -1;  // -1: no exchange (p = 1)
};

class GossipGradSchedule {
 public:
  // Throws ConfigError naming `pattern_key` for hypercube with p not a power of two.
  GossipGradSchedule(int p, GossipPattern pattern, bool rotate, std::uint64_t seed,
                     const std::string& pattern_key = "pattern");
  int size() const { return p_; }
  int steps_per_round() const { return L_; }  // ceil(log2 p); 0 for p = 1
  bool power_of_two() const { return (p_ & (p_ - 1)) == 0; }
  // The communicator step t uses.
  std::int64_t communicator(std::int64_t step) const;
  // Physical partners of physical rank `rank` at step t. Safe to call from the ranks of one process (the
  // simulator's actors, MPI's threads): the communicators are built once under a lock and a few are kept.
  GossipPartners partners(Rank rank, std::int64_t step) const;

 private:
  struct Labelling {
    std::vector<Rank> order;     // virtual -> physical
    std::vector<Rank> virtual_;  // physical -> virtual
  };
  std::shared_ptr<const Labelling> labelling(std::int64_t m) const;

  int p_, L_;
  GossipPattern pattern_;
  bool rotate_;
  std::uint64_t seed_;
  mutable std::mutex mutex_;
  mutable std::map<std::int64_t, std::shared_ptr<const Labelling>> cache_;  // the last few communicators
};

// "dissemination" | "hypercube".
GossipPattern gossip_pattern(const std::string& name);

}  // namespace dts
