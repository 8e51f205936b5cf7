// Flows timed without SimGrid's bandwidth-sharing solver, for BIDMach's line rounds at scale
// (run.line_round_timing "nic", line_round_sim.hpp): a flow pays its route's latency, then its bytes move at
// the rate SimGrid gives it alone on its route (RouteTimes), divided by the load of the busier of its two NICs
// (its sender's way out, its receiver's way in): the flows moving through it, plus, where the network model
// has cross-traffic (network/crosstraffic, on by default), 0.05 for each flow that crosses it the other way
// round (SimGrid charges a flow 0.05 of its rate on its reverse route). Processor sharing at each end of the
// flow, re-rated whenever a flow starts or ends at one of the NICs it loads. Each change touches the flows of
// four NICs, where SimGrid's solver re-solves every flow connected to it (a grid's lines connect them all
// through their members' NICs). A NIC is taken to be split-duplex, one link each way (the star's default; the
// pre-run check refuses the star's others). Left out: the links between the NICs (a fat tree's switches),
// max-min's redistribution of what a flow bound elsewhere leaves on a NIC, and flows other than these.
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
  struct Nic {               // one NIC, one way
    std::list<Flow*> flows;  // moving through it
    int echoes = 0;          // flows crossing it the other way round (cross-traffic)
  };
  struct Flow {
    double alone_Bps = 0;                         // its rate alone on its route
    double left = 0;                              // bytes still to move at `at`
    double at = 0;                                // simulated time
    double rate = 0;                              // bytes per second since `at`
    Nic *out = nullptr, *in = nullptr;            // its sender's way out, its receiver's way in
    Nic *echo_out = nullptr, *echo_in = nullptr;  // its receiver's way out, its sender's way in (cross-traffic)
    // Released when its rate changes: a timed wait on a condition variable of SimGrid 3.32 leaves its timer
    // behind when notified, which later ends another wait of the same actor (a deadlock at 4,096 workers).
    simgrid::s4u::SemaphorePtr changed;
  };
  double load(const Nic& nic) const;
  static void settle(Nic& nic, double now);  // every flow of `nic` moved to `now` at its rate
  // Every flow of `nic` given its share; its actor to be told, in `tell`.
  void rerate(Nic& nic, std::vector<simgrid::s4u::SemaphorePtr>& tell) const;

  const RouteTimes& routes_;
  double echo_ = 0;  // what a flow the other way round weighs on a NIC: 0.05, or 0 without cross-traffic
  std::unordered_map<const simgrid::s4u::Host*, Nic> out_, in_;
};

}  // namespace dts::sim
