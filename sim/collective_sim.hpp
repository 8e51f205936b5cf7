// The `collective` communication fidelity (DESIGN.md §3): a collective's plan (algorithms/api/
// collective_plan.hpp) runs as SimGrid flows started by its members' actors on the real hosts and routes,
// with no courier per message and no message matching. CollectiveSim knows plans, not collectives:
//   o A plan, stage by stage (collective_sim.cpp): one flow per message, started by the sender when its
//     stage begins, blocking it (or, in a stage that also adds, carried by an actor of its own so that the
//     additions overlap it); a receive waits for the matching flow to arrive: the message version's timing.
//   o A plan that is a ring pipeline (RingPipeline; collective_pipeline.cpp): while P x steps fits the flow
//     budget, one flow per step, each started when the message version would start it: the message
//     version's timing. Beyond the budget the members' first steps run as flows once all arrived, together,
//     as a sample; the timing follows from the pipeline's recurrence from each member's arrival on, every
//     step of a member taking its sample's latency plus its chunk at its sample's rate. Exact wherever a
//     member's rate does not change during the collective (no contention that comes and goes); the error on
//     contended fabrics and with stragglers is measured (tests/sim/collective_fidelity_test.cpp). With
//     RingSampling::sample_steps K > 1 the first K steps run as flows instead, as within the budget, and
//     the recurrence takes over from where each member stands, at the rates of the second half of those
//     flows: less error on contended fabrics, at the cost of K x P flows started at P different instants.
// Real numerics are those of the message version bit for bit: a message carries a copy of the sender's
// chunk taken when its stage begins, applied by the receiver; a pipeline's steps are replayed in order by
// the last member to arrive (nobody's part of a ring ends before every member arrived).
// BIDMach's line rounds, which are no plan, run as flows of their own above a message budget (LineRounds,
// line_round_sim.hpp; CollectiveEngine::line_round).
// Counters: bytes and messages are those of the message version (what the collective represents). The time
// account (time_account.hpp, the world's) is kept here: the collective's category, its flows and waits.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "algorithms/api/collective_engine.hpp"
#include "sim/line_round_sim.hpp"
#include "sim/route_times.hpp"
#include "sim/sim_world.hpp"
#include "sim/time_account.hpp"

namespace dts::sim {

enum class Fidelity : std::uint8_t { kMessage, kCollective };
const char* to_string(Fidelity f);

// How the collective fidelity times ring pipelines (run.ring_flow_budget, run.ring_sample_steps). A ring of
// P members and S steps runs one flow per step while P x S <= flow_budget; beyond, it is sampled: its first
// sample_steps steps (at most S / 2) run as flows and the rest follows from the pipeline's recurrence.
struct RingSampling {
  static constexpr int kFlowBudget = 8192;
  int flow_budget = kFlowBudget;
  int sample_steps = 1;
  // Whether a ring of `members` and `steps` steps is sampled (above the budget).
  bool sampled(int members, int steps) const { return static_cast<long>(members) * steps > flow_budget; }
};

class CollectiveSim final : public CollectiveEngine {
 public:
  // After the platform is built (reads the network model's latency factors).
  // `lines`: how BIDMach's line rounds are timed (LineRounds).
  explicit CollectiveSim(SimWorld& world, RingSampling rings = {}, LineRoundTiming lines = {});
  void run(const PlanCall& call) override;
  std::unique_ptr<LineRoundPart> line_round(const LineRoundSpec& spec) override;

 private:
  struct Flow {   // stage by stage: one message
    int to = -1;  // group index
    bool delivered = false;
    std::uint64_t arrival = 0;         // when delivered: the engine's count of delivered flows
    std::shared_ptr<FlowTrace> trace;  // for the time account
    std::vector<float> payload;        // the sent chunk, taken when the stage began
  };
  struct Member {
    Rank rank = -1;
    Slice data;
    // Stage by stage: my messages in send order, and how many I took from each peer (peer, count).
    std::list<Flow> sent;  // a list: no allocation while empty (every member of a ring pipeline)
    std::vector<std::pair<int, int>> taken;
    // Pipeline, flow per step: my flows to the right neighbour that have arrived, and those whose
    // dependencies are met.
    int steps_sent = 0, steps_allowed = 0;
    // Pipeline, sampled: where my recurrence starts; my sampled flows' count and their summed time, latency
    // alone and floats; my sampled additions' time and floats; my end.
    double start_s = 0, flows = 0, flow_s = 0, latency_s = 0, flow_floats = 0, add_s = 0, add_floats = 0, done_s = 0;
  };
  struct Instance {
    std::vector<Member> members;  // by group index
    int joined = 0, arrived = 0;
    int sampled = 0;  // pipeline, sampled: members whose sampled steps are done
  };
  using Key = std::tuple<std::uint64_t, Tag, std::uint64_t, int>;  // plan name's hash, tag, members' hash, size

  // The caller's instance of the plan: that of its round for a numbered call (kept while a member has not
  // joined: one may skip a round), else the members' next one of its key.
  std::shared_ptr<Instance> join(const PlanCall& call);
  void stages(const PlanCall& call, Instance& inst);

  void pipeline(const PlanCall& call, Instance& inst, const RingPipeline& ring);
  void pipeline_math(Instance& inst, const CollectivePlan& plan, int steps) const;
  // How many of a pipeline's `count` steps of P members run as flows (all within the flow budget).
  int pipeline_flow_steps(int P, int count) const;
  void pipeline_flows(const PlanCall& call, Instance& inst, const RingPipeline& ring, int upto);
  void pipeline_rest(const PlanCall& call, Instance& inst, const RingPipeline& ring, int done);
  void pipeline_sampled(const PlanCall& call, Instance& inst, const RingPipeline& ring);
  void pipeline_finish(const Member& me, double adds_s, simgrid::s4u::Host* host) const;
  // Every member's end, from step `first` on, as the message version's pipeline would run.
  static void pipeline_recurrence(Instance& inst, const RingPipeline& ring, std::size_t n, int first);
  // The latency of one message of `bytes` from a to b: route latency x the model's latency factor.
  double latency_s(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const {
    return routes_.latency_s(a, b, bytes);
  }

  SimWorld& world_;
  RingSampling rings_;
  RouteTimes routes_;
  LineRounds lines_;
  std::map<std::tuple<Key, bool, std::uint64_t>, std::shared_ptr<Instance>> open_;  // (key, numbered, round | seq)
  std::map<std::pair<Key, Rank>, std::uint64_t> next_seq_;
  std::uint64_t arrivals_ = 0;
};

}  // namespace dts::sim
