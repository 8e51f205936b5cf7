// The `collective` communication fidelity (DESIGN.md §3): a collective runs as SimGrid flows started by its
// members' actors on the real hosts and routes, with no courier actor and no message matching.
//   o Ring reduce-scatter, allgather, allreduce (collective_ring.cpp): while P x steps fits the flow budget,
//     one flow per step, each started when the message version would start it: the message version's timing.
//     Beyond the budget the members' first steps run as flows once all arrived, together, as a sample; the
//     timing follows from the ring's pipeline from each member's arrival on, every step of a member taking
//     its sample's latency plus its chunk at its sample's rate. Exact wherever a member's rate does not
//     change during the collective (no contention that comes and goes); the error on contended fabrics and
//     with stragglers is measured (tests/sim/collective_fidelity_test.cpp). With RingSampling::sample_steps
//     K > 1 the first K steps run as flows instead, as within the budget, and the pipeline takes over from
//     where each member stands, at the rates of the second half of those flows: less error on contended
//     fabrics, at the cost of K x P flows started at P different instants.
//   o Binomial trees and the pairwise exchange: one flow per message of the message version, started by the
//     sender when its dependencies allow: the message version's timing.
// Real numerics are those of the message version bit for bit: the ring sums run chunk by chunk in the
// ring's order, done by the last member to arrive; tree members add their children in the tree's order.
// Counters: bytes and messages are those of the message version (what the collective represents).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "algorithms/api/collective_engine.hpp"
#include "sim/sim_world.hpp"
#include "sim/time_account.hpp"

namespace dts::sim {

enum class Fidelity : std::uint8_t { kMessage, kCollective };
const char* to_string(Fidelity f);

// How the collective fidelity times ring collectives (run.ring_flow_budget, run.ring_sample_steps). A ring of
// P members and S steps runs one flow per step while P x S <= flow_budget; beyond, it is sampled: its first
// sample_steps steps (at most S / 2) run as flows and the rest follows from the ring's pipeline.
struct RingSampling {
  static constexpr int kFlowBudget = 8192;
  int flow_budget = kFlowBudget;
  int sample_steps = 1;
};

class CollectiveSim final : public CollectiveEngine {
 public:
  // After the platform is built (reads the network model's latency factors).
  explicit CollectiveSim(SimWorld& world, RingSampling rings = {});
  void run(const CollectiveCall& call) override;

 private:
  struct Member {
    Rank rank = -1;
    bool arrived = false;
    bool delivered = false;  // trees, pairwise: the flow addressed to (tree) or sent by (pairwise) me is done
    int steps_sent = 0;      // ring, flow per step: my flows to the right neighbour that have arrived
    int steps_allowed = 0;   // ring, flow per step: my flows whose dependencies are met
    // Ring, sampled: where my pipeline starts; my sampled flows' count and their summed time, latency alone
    // and floats; my sampled additions' time and floats; my end.
    double start_s = 0, flows = 0, flow_s = 0, latency_s = 0, flow_floats = 0, add_s = 0, add_floats = 0, done_s = 0;
    Slice data;
    ConstSlice send;                   // pairwise
    std::vector<float> payload;        // trees: a snapshot of data sent before its receiver could take it
    std::shared_ptr<FlowTrace> trace;  // trees, pairwise: the flow behind `delivered`, for the time account
  };
  struct Instance {
    std::vector<Member> members;  // by group index
    int joined = 0, arrived = 0;
    int sampled = 0;  // ring, sampled: members whose first step is done
  };
  struct RingSteps;                                      // which chunk a ring member sends and adds in each step
  using Key = std::tuple<int, Tag, std::uint64_t, int>;  // op, tag, hash of the members, size

  // The caller's instance of the collective `call` among `group`: the members' next one of its key.
  std::shared_ptr<Instance> join(const CollectiveCall& call, const Group& group);
  void ring(const CollectiveCall& call, int index);
  void ring_math(Instance& inst, CollectiveOp op, std::size_t n) const;
  // How many of a ring's `count` steps of P members run as flows (all within the flow budget).
  int ring_flow_steps(int P, int count) const;
  void ring_flows(const CollectiveCall& call, Instance& inst, int index, const RingSteps& steps, int upto);
  void ring_rest(const CollectiveCall& call, Instance& inst, int index, const RingSteps& steps, int done);
  void ring_sampled(const CollectiveCall& call, Instance& inst, int index, const RingSteps& steps);
  static void ring_finish(const Member& me, double adds_s, simgrid::s4u::Host* host);
  // Every member's end, from step `first` on, as the message version's pipeline would run.
  static void ring_pipeline(Instance& inst, const RingSteps& steps, int first);
  void tree_reduce(const CollectiveCall& call, int index);
  void tree_broadcast(const CollectiveCall& call, int index);
  void pairwise(const CollectiveCall& call);
  // The latency of one message of `bytes` from a to b: route latency x the model's latency factor.
  double latency_s(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const;

  SimWorld& world_;
  RingSampling rings_;
  bool smpi_factors_ = false;
  double latency_factor_ = 1;
  std::vector<std::pair<double, double>> smpi_lat_;  // (size threshold, factor), ascending
  std::map<std::pair<Key, std::uint64_t>, std::shared_ptr<Instance>> open_;
  std::map<std::pair<Key, Rank>, std::uint64_t> next_seq_;
  mutable std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, double> route_latency_;  // latency_s's
};

}  // namespace dts::sim
