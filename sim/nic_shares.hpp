// Flows timed without SimGrid's bandwidth-sharing solver, for BIDMach's line rounds at scale
// (run.line_round_timing "nic", line_round_sim.hpp): a flow pays its route's latency, then its bytes move at
// the rate SimGrid gives it alone on its route (RouteTimes), divided by the most flows moving at once through its
// sender's NIC or its receiver's: processor sharing at each end of the flow, re-rated whenever a flow starts or
// ends at either NIC. Each change touches the flows of two NICs, where SimGrid's solver re-solves every flow
// connected to it (a grid's lines connect them all through their members' NICs). A NIC is taken to be
// split-duplex, one link each way (the star's default; the pre-run check refuses the star's others). Left out:
// the links between the NICs (a fat tree's switches), max-min's redistribution of what a flow bound elsewhere
// leaves on a NIC, LV08's cross-traffic, and flows other than these.
#pragma once

#include <list>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "sim/route_times.hpp"

namespace dts::sim {

class NicShares {
 public:
  explicit NicShares(const RouteTimes& routes);
  // Blocks the calling actor until `bytes` have crossed from `from` to `to` (different hosts).
  void carry(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes);

 private:
  struct Flow;
  using Nic = std::list<Flow*>;  // the flows moving through one NIC in one direction
  struct Flow {
    double alone_Bps = 0;  // its rate alone on its route
    double left = 0;       // bytes still to move at `at`
    double at = 0;         // simulated time
    double rate = 0;       // bytes per second since `at`
    Nic *out = nullptr, *in = nullptr;
    simgrid::s4u::ConditionVariablePtr changed;
  };
  static void settle(Nic& nic, double now);  // every flow of `nic` moved to `now` at its rate
  // Every flow of `nic` given its share; its actor to be told, in `tell`.
  static void rerate(Nic& nic, std::vector<simgrid::s4u::ConditionVariablePtr>& tell);

  const RouteTimes& routes_;
  simgrid::s4u::MutexPtr mutex_;  // what the condition variables want; actors do not run at once
  std::unordered_map<const simgrid::s4u::Host*, Nic> out_, in_;
};

}  // namespace dts::sim
