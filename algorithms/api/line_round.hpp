// An optional hook of the seam beside CollectiveEngine's plans: BIDMach's line round (algorithms/collectives/
// quorum_allreduce.hpp) timed as a whole instead of as its messages. A line of p members sends p (p - 1) x
// chunks messages a phase, all to all, which no message-level simulation carries at thousands of members; the
// simulator's collective fidelity (sim/line_round_sim.hpp) carries each member's phase as one flow instead, in
// modeled numerics. QuorumRound asks for a part (CollectiveEngine::line_round) and, given one, drives its round
// through it: the same quorums, counted per block instead of per chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/api/group.hpp"
#include "algorithms/api/request.hpp"

namespace dts {

struct LineRoundSpec {
  const Group* line = nullptr;
  int index = -1;  // my member index
  Tag tag = 0;     // with the line and the round, tells one round's instance from another's
  Round round = 0;
  std::vector<std::uint64_t> block_bytes;  // per member: what a message of its whole block carries
  std::vector<std::size_t> block_chunks;   // per member: the message version's chunks of its block
  std::size_t need_reduce = 1;             // contributions (mine included) my block's mean waits for
  std::size_t need_complete = 1;           // reduced chunks (my block's included) I wait for to complete
};

// My part of one line round. A member's contributions travel as groups() flows in turn, group g carrying the
// chunks [group_begin(c, groups(), g), group_begin(c, groups(), g + 1)) of every block of c chunks; its reduced
// block likewise. Quorums count per group (the message version's per chunk). Requests complete in simulated time;
// each may be waited on a Reactor.
class LineRoundPart {
 public:
  virtual ~LineRoundPart() = default;
  static std::size_t group_begin(std::size_t chunks, std::size_t groups, std::size_t g) { return chunks * g / groups; }
  virtual std::size_t groups() const = 0;
  // Sends my contributions to every other member (p - 1 blocks), group after group; completes when all are in.
  virtual Request scatter() = 0;
  // Completes once group g of my block holds need_reduce contributions, mine included.
  virtual Request reduce_due(std::size_t g) = 0;
  // Contributions to group g of my block held now, mine included.
  virtual std::size_t contributions(std::size_t g) const = 0;
  // Group g of my block is reduced (groups in order): it goes to every other member after my earlier ones.
  virtual void send_reduced(std::size_t g) = 0;
  // Completes once every group of my block has been reduced and delivered.
  virtual Request reduced_delivered() = 0;
  // Completes once I hold need_complete reduced chunks (my own block's as they are reduced).
  virtual Request complete_due() = 0;
  // Reduced chunks held now.
  virtual std::size_t held_chunks() const = 0;
};

}  // namespace dts
