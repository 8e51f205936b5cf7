// The collective fidelity's line rounds (algorithms/api/line_round.hpp): BIDMach's round over one line of p
// members timed as a whole, in modeled numerics. Each member's scatter (its contributions to the p - 1 other
// blocks) is one flow of their bytes to its line neighbour, started when it joins the round, and its reduced
// block, once the quorum of contributions has arrived, one flow of p - 1 copies of it to the same neighbour:
// every member's NIC carries what the message version's all-to-all gives it, with p flows in flight per phase
// instead of p (p - 1) x chunks messages. A contribution counts for every block at its flow's arrival, a reduced
// block for every member at its flow's arrival: the quorums count per block where the message version counts per
// chunk, and a phase pays one latency where the message version pipelines chunks two at a time per pair. Bytes and
// messages are counted as the message version's (the pairs it connects and the chunks it sends). Rounds whose
// message version sends at most `message_budget` messages run as messages, as at the message fidelity.
// With `nic` the flows are not SimGrid's: they share their members' NICs among themselves (NicShares), without
// SimGrid's bandwidth-sharing solver, whose cost grows with the square of the flows in flight where a grid's
// lines connect all of them through their members' NICs. What that leaves out is in nic_shares.hpp; the README
// measures the difference against the flows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "algorithms/api/line_round.hpp"
#include "sim/nic_shares.hpp"
#include "sim/sim_world.hpp"

namespace dts::sim {

// run.line_round_budget and run.line_round_groups.
struct LineRoundTiming {
  std::uint64_t message_budget = 65536;  // rounds whose message version sends more run as flows
  std::size_t groups = 4;                // of so many groups each (LineRoundPart)
  bool nic = false;                      // run.line_round_timing "nic" (above), else "flows"
};

class LineRounds {
 public:
  LineRounds(SimWorld& world, LineRoundTiming timing, const RouteTimes& routes);
  ~LineRounds();
  // My part of the round `spec` names (null: the round runs as messages). Members join in any order.
  std::unique_ptr<LineRoundPart> join(const LineRoundSpec& spec, Rank self);

  struct Instance;

 private:
  using Key = std::tuple<std::uint64_t, Tag, Round, int>;  // line's hash, tag, round, size
  SimWorld& world_;
  LineRoundTiming timing_;
  std::unique_ptr<NicShares> nics_;                // `nic` only
  std::map<Key, std::shared_ptr<Instance>> open_;  // until every member has joined
};

}  // namespace dts::sim
