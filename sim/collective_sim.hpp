// The `collective` communication fidelity (DESIGN.md §3): a collective runs as SimGrid flows started by its
// members' actors on the real hosts and routes, with no courier actor and no message matching.
//   o Ring reduce-scatter, allgather, allreduce: each member sends its ring steps to its right neighbour in
//     phases; phase q starts once the left neighbour's phase q - 1 arrived and was added and my own phase
//     q - 1 arrived, as each message step waits for the previous one. Within kFlowBudget (P x phases) a
//     phase is one step and the timing is the message version's; beyond it a phase is one flow carrying the
//     bytes of several steps after their extra latencies (route latency x the model's latency factor; SMPI
//     and IB: the factors of the step's message size). Exact on a uniform star without stragglers; on
//     contended fabrics and with stragglers the error is measured (tests/sim/collective_fidelity_test.cpp).
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

class CollectiveSim final : public CollectiveEngine {
 public:
  // After the platform is built (reads the network model's latency factors).
  // A ring collective of P members runs in at most kFlowBudget / P phases of aggregated steps.
  static constexpr int kFlowBudget = 8192;
  // max_ring_phases > 0 overrides the budget (tests measure the error of heavy aggregation with it);
  // flow_budget replaces kFlowBudget (run.ring_flow_budget: fewer flows, faster, coarser).
  explicit CollectiveSim(SimWorld& world, int max_ring_phases = 0, int flow_budget = kFlowBudget);
  void run(const CollectiveCall& call) override;

 private:
  struct Member {
    Rank rank = -1;
    bool arrived = false;
    bool delivered = false;      // trees, pairwise: the flow addressed to (tree) or sent by (pairwise) me is done
    int phases_sent = 0;         // ring: my flows to the right neighbour that have arrived
    int phases_allowed = 0;      // ring: my flows whose dependencies are met
    Slice data;
    ConstSlice send;             // pairwise
    std::vector<float> payload;  // trees: a snapshot of data sent before its receiver could take it
    std::shared_ptr<FlowTrace> trace;  // trees, pairwise: the flow behind `delivered`, for the time account
  };
  struct Instance {
    std::vector<Member> members;  // by group index
    int joined = 0, arrived = 0;
  };
  using Key = std::tuple<int, Tag, std::uint64_t, int>;  // op, tag, hash of the members, size

  std::shared_ptr<Instance> join(const Key& key, std::span<const Rank> ranks, Rank self);
  // Phases of a ring of P members and `steps` steps: every step alone when the flow budget allows.
  int ring_phases(int P, int steps) const;
  void ring(const CollectiveCall& call, int index);
  void ring_math(Instance& inst, CollectiveOp op, std::size_t n) const;
  void tree_reduce(const CollectiveCall& call, int index);
  void tree_broadcast(const CollectiveCall& call, int index);
  void pairwise(const CollectiveCall& call);
  // The latency of one message of `bytes` from a to b: route latency x the model's latency factor.
  double latency_s(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const;
  // The bytes an aggregated flow must carry so that its bandwidth phase lasts as long as those of the
  // messages it replaces (only size-dependent bandwidth factors, SMPI and IB, make a difference).
  std::uint64_t flow_bytes(double total_bytes, double message_bytes) const;

  SimWorld& world_;
  int max_ring_phases_ = 0;
  int flow_budget_ = kFlowBudget;
  bool smpi_factors_ = false;
  double latency_factor_ = 1;
  std::vector<std::pair<double, double>> smpi_lat_, smpi_bw_;  // (size threshold, factor), ascending
  std::map<std::pair<Key, std::uint64_t>, std::shared_ptr<Instance>> open_;
  std::map<std::pair<Key, Rank>, std::uint64_t> next_seq_;
  mutable std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, double> route_latency_;  // latency_s's
};

}  // namespace dts::sim
