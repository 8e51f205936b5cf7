// CollectiveSim's ring pipelines (RingPipeline): the message version's sums, replayed step by step, and its
// timing with one flow per step or, beyond the flow budget, with the first steps' flows and the pipeline's
// recurrence.
#include <algorithm>
#include <simgrid/s4u.hpp>

#include "algorithms/api/compute.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "sim/actor_stack.hpp"
#include "sim/collective_sim.hpp"
#include "sim/ring_recurrence.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {
int mod(int a, int P) { return ((a % P) + P) % P; }

// What member r sends and adds in step s, in floats.
std::pair<std::size_t, std::size_t> step_floats(const CollectivePlan& plan, int r, int s) {
  const PlanStage st = plan.stage(r, s);
  return {st.sends.front().chunk.count, st.recvs.front().add ? st.recvs.front().chunk.count : 0};
}
}  // namespace

// The sums in the message version's order: its steps one after the other, every member receiving what its
// left neighbour sends. Within a step no member writes the chunk it sends, so the chunks are read in place.
void CollectiveSim::pipeline_math(Instance& inst, const CollectivePlan& plan, int steps) const {
  std::vector<Slice> data;
  data.reserve(inst.members.size());
  for (const Member& m : inst.members) data.push_back(m.data);
  move_in_place(plan, data, steps);
}

int CollectiveSim::pipeline_flow_steps(int P, int count) const {
  // A link window changes the network while the pipeline runs: every step as flows, whatever the budget.
  if (!rings_.sampled(P, count) || world_.wires().windowed()) return count;
  return std::max(1, std::min(rings_.sample_steps, count / 2));
}

void CollectiveSim::pipeline(const PlanCall& call, Instance& inst, const RingPipeline& ring) {
  const int P = call.plan->size();
  inst.members[static_cast<std::size_t>(call.index)].data = call.data;
  // The last member to arrive does everyone's math: nobody's part ends before every member arrived.
  if (++inst.arrived == P && !call.data.data.empty()) pipeline_math(inst, *call.plan, ring.steps());
  const int flow_steps = pipeline_flow_steps(P, ring.steps());
  if (flow_steps == ring.steps()) {
    pipeline_flows(call, inst, ring, flow_steps);
  } else if (flow_steps > 1) {
    pipeline_flows(call, inst, ring, flow_steps);
    pipeline_rest(call, inst, ring, flow_steps);
  } else {
    pipeline_sampled(call, inst, ring);
  }
}

// As in the message version, step s is sent once step s - 1 was received from the left and added, and my
// own step s - 1 arrived; the additions overlap my own flow. A sender actor carries my flows, so that I can
// receive and add meanwhile.
void CollectiveSim::pipeline_flows(const PlanCall& call, Instance& inst, const RingPipeline& ring, int upto) {
  const CollectivePlan& plan = *call.plan;
  const int P = plan.size(), r = call.index;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Member& left = inst.members[static_cast<std::size_t>(mod(r - 1, P))];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  sg4::Host* src = world_.host(call.self);
  sg4::Host* dst = world_.host(right);
  auto sender = start_actor("pipeline-flow", src, kCourierStackKiB, [&] {
    for (int s = 0; s < upto; ++s) {
      world_.wait_until(
          call.self, [&] { return me.steps_allowed > s; }, kForever);
      const std::size_t sent = step_floats(plan, r, s).first;
      const std::uint64_t bytes = call.bytes(sent);
      world_.account(call.self, right, bytes, 1);
      const double t0 = sg4::Engine::get_clock();
      if (src != dst) world_.wires().carry(src, dst, bytes);
      if (upto < ring.steps() && s >= upto / 2 && src != dst) {  // the second half: the rate of the rest
        me.flow_s += sg4::Engine::get_clock() - t0;
        me.latency_s += latency_s(src, dst, static_cast<double>(bytes));
        me.flow_floats += static_cast<double>(sent);
        ++me.flows;
      }
      me.steps_sent = s + 1;
      world_.wake(right);
      world_.wake(call.self);
    }
  });
  for (int s = 0; s < upto; ++s) {
    me.steps_allowed = s + 1;
    world_.wake(call.self);
    world_.wait_until(
        call.self, [&] { return left.steps_sent > s; }, kForever);
    const std::size_t added = step_floats(plan, r, s).second;
    if (added > 0 && call.compute != nullptr) {
      const double t0 = sg4::Engine::get_clock();
      call.compute->charge_reduce(added, 3);
      me.add_s += sg4::Engine::get_clock() - t0;
      me.add_floats += static_cast<double>(added);
    }
    world_.wait_until(
        call.self, [&] { return me.steps_sent > s; }, kForever);
  }
  sender->join();
}

// After pipeline_flows ran the first `done` steps: the rest from the recurrence, from where each member
// stands, at the rates its last flows had. My later additions are accounted as updates, as in
// pipeline_sampled.
void CollectiveSim::pipeline_rest(const PlanCall& call, Instance& inst, const RingPipeline& ring, int done) {
  const int P = call.plan->size(), r = call.index;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  const std::uint64_t sent_rest = ring.sent_floats(r, done), added_rest = ring.added_floats(r, done);
  world_.account(call.self, right, call.bytes(sent_rest), static_cast<std::uint64_t>(ring.steps() - done));
  me.start_s = sg4::Engine::get_clock();
  if (++inst.sampled == P) {
    pipeline_recurrence(inst, ring, call.data.count, done);
    for (const Member& m : inst.members) world_.wake(m.rank);
  } else {
    world_.wait_until(
        call.self, [&] { return inst.sampled == P; }, kForever);
  }
  pipeline_finish(me, me.add_floats > 0 ? me.add_s * static_cast<double>(added_rest) / me.add_floats : 0,
                  world_.host(call.self));
}

// Until my pipeline's end, the first `adds_s` of it accounted as updates (my additions after the sample).
void CollectiveSim::pipeline_finish(const Member& me, double adds_s, sg4::Host* host) const {
  const double rest = me.done_s - sg4::Engine::get_clock();
  if (rest <= 0) return;
  {
    const TimeAccount::Scope updating(world_.time_account(), update_category(host));
    sg4::this_actor::sleep_for(std::min(adds_s, rest));
  }
  sg4::this_actor::sleep_until(me.done_s);
}

// 1. A sample of my first step: my flow to the right neighbour and, meanwhile, the addition of what my left
// neighbour sends in it. 2. The last member to be done runs the recurrence for all (pipeline_recurrence).
// 3. I end when the recurrence says, the time of my later additions accounted as updates.
void CollectiveSim::pipeline_sampled(const PlanCall& call, Instance& inst, const RingPipeline& ring) {
  const int P = call.plan->size(), r = call.index;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  sg4::Host* src = world_.host(call.self);
  sg4::Host* dst = world_.host(right);
  const std::uint64_t added = ring.added_floats(r, 0);
  const auto [sent0, added0] = step_floats(*call.plan, r, 0);
  world_.account(call.self, right, call.bytes(ring.sent_floats(r, 0)), static_cast<std::uint64_t>(ring.steps()));

  // 1. Every member's first step from the last arrival on, all flows at once as in the steady pipeline:
  // one flow start and few completions for SimGrid to solve (starts spread over P instants re-solve
  // every flow coupled with the others P times). My pipeline starts at my arrival.
  me.start_s = sg4::Engine::get_clock();
  if (inst.arrived == P) {
    for (const Member& m : inst.members) world_.wake(m.rank);
  } else {
    world_.wait_until(
        call.self, [&] { return inst.arrived == P; }, kForever);
  }
  const double sampled_at = sg4::Engine::get_clock();
  Wires::Transfer flow;
  if (src != dst) {
    const std::uint64_t bytes = call.bytes(sent0);
    flow = world_.wires().start(src, dst, bytes);
    me.latency_s = latency_s(src, dst, static_cast<double>(bytes));
    me.flow_floats = static_cast<double>(sent0);
    me.flows = 1;
  }
  if (added0 > 0 && call.compute != nullptr) {
    call.compute->charge_reduce(added0, 3);
    me.add_s = sg4::Engine::get_clock() - sampled_at;
    me.add_floats = static_cast<double>(added0);
  }
  if (flow.comm) me.flow_s = world_.wires().finish(flow) - sampled_at;

  if (++inst.sampled == P) {
    pipeline_recurrence(inst, ring, call.data.count, 0);
    for (const Member& m : inst.members) world_.wake(m.rank);
  } else {
    world_.wait_until(
        call.self, [&] { return inst.sampled == P; }, kForever);
  }
  pipeline_finish(me, added0 > 0 ? me.add_s * static_cast<double>(added - added0) / static_cast<double>(added0) : 0,
                  src);
}

// The message version's timing (pipeline_flows), from each member's sampled flow and additions: the wire time of
// a chunk is the flow's latency plus its floats x the seconds per float of the sampled flow, an addition the
// sampled additions' time per float (sim/ring_recurrence.hpp).
void CollectiveSim::pipeline_recurrence(Instance& inst, const RingPipeline& ring, std::size_t n, int first) {
  const int P = static_cast<int>(inst.members.size());
  const auto p = static_cast<std::size_t>(P);
  const auto small = static_cast<double>(n / p);  // floats of a small chunk
  std::vector<double> start(p);
  RingFigures f;
  for (std::vector<double>* v : {&f.wire_small, &f.wire_big, &f.add_small, &f.add_big}) v->resize(p);
  for (std::size_t i = 0; i < p; ++i) {
    const Member& m = inst.members[i];
    const double per_float = m.flow_floats > 0 ? (m.flow_s - m.latency_s) / m.flow_floats : 0;
    const double latency = m.flows > 1 ? m.latency_s / m.flows : m.latency_s;
    const double add_per_float = m.add_floats > 0 ? m.add_s / m.add_floats : 0;
    start[i] = m.start_s;
    f.wire_small[i] = m.flow_s > 0 ? latency + per_float * small : 0;
    f.wire_big[i] = m.flow_s > 0 ? latency + per_float * (small + 1) : 0;
    f.add_small[i] = add_per_float * small;
    f.add_big[i] = add_per_float * (small + 1);
  }
  std::vector<RingStep> steps;
  for (int s = first; s < ring.steps(); ++s) {
    RingStep step;
    step.chunk0 = static_cast<std::size_t>(mod(ring.shift(s), P));
    step.adds = ring.adds(s);
    steps.push_back(step);
  }
  ring_recurrence(start, f, steps, n % p);
  for (std::size_t i = 0; i < p; ++i) inst.members[i].done_s = start[i];
}

}  // namespace dts::sim
