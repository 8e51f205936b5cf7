// CollectiveSim's rings: the message version's sums, and its timing with one flow per step or, beyond the
// flow budget, with the first step's flows and the ring's pipeline.
#include <algorithm>
#include <simgrid/s4u.hpp>

#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "sim/actor_stack.hpp"
#include "sim/collective_sim.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {
int mod(int a, int P) { return ((a % P) + P) % P; }
}  // namespace

// The message version's steps (ring.cpp): reduce-scatter with shift h sends chunk r - s - h in step s and
// adds the received chunk r - s - 1 - h; allgather with shift g sends chunk r + g - s. Allreduce: h = 0 for
// P - 1 steps, then g = 1; reduce-scatter alone: h = 1; allgather alone: g = 0.
struct CollectiveSim::RingSteps {
  CollectiveOp op;
  int P;
  std::size_t n;

  int count() const { return op == CollectiveOp::kRingAllreduce ? 2 * (P - 1) : P - 1; }
  // In step s member r sends chunk r + shift(s) and, if adds(s), adds the received chunk r + shift(s) - 1.
  int shift(int s) const {
    if (op == CollectiveOp::kRingAllgather) return -s;
    if (op == CollectiveOp::kRingReduceScatter) return -s - 1;
    return s < P - 1 ? -s : 1 - (s - (P - 1));
  }
  bool adds(int s) const { return op != CollectiveOp::kRingAllgather && s < P - 1; }
  std::size_t floats(int chunk) const { return collectives::ring_chunk(n, P, mod(chunk, P)).second; }
  std::size_t sent(int r, int s) const { return floats(r + shift(s)); }
  std::size_t added(int r, int s) const { return adds(s) ? floats(r + shift(s) - 1) : 0; }
  // Over all steps: a reduce-scatter or allgather sends every chunk but one (the one its shift would reach
  // in step P - 1), and a reduce-scatter adds every chunk but the one it sends first.
  std::size_t sent_total(int r) const {
    if (op != CollectiveOp::kRingAllreduce) return n - floats(r + shift(P - 1));
    return 2 * n - floats(r - (P - 1)) - floats(r + 1 - (P - 1));
  }
  std::size_t added_total(int r) const { return op == CollectiveOp::kRingAllgather ? 0 : n - floats(r + shift(0)); }
};

// The ring's sums, chunk by chunk in the order the message version adds them: with reduce-scatter shift h,
// chunk c starts at member c + h and member c + h + k adds its own values to the running sum it receives.
// Allreduce: h = 0, then everyone gets the sums; reduce-scatter: h = 1, member c keeps chunk c; allgather:
// member c's chunk c goes to everyone.
void CollectiveSim::ring_math(Instance& inst, CollectiveOp op, std::size_t n) const {
  const int P = static_cast<int>(inst.members.size());
  auto data = [&](int j) -> Slice { return inst.members[static_cast<std::size_t>(mod(j, P))].data; };
  std::vector<float> acc;
  for (int c = 0; c < P; ++c) {
    const auto [off, len] = collectives::ring_chunk(n, P, c);
    if (op == CollectiveOp::kRingAllgather) {
      for (int j = 1; j < P; ++j) rules::copy(data(c + j).sub(off, len), data(c).sub(off, len));
      continue;
    }
    const int h = op == CollectiveOp::kRingAllreduce ? 0 : 1;
    acc.assign(data(c + h).data.begin() + static_cast<std::ptrdiff_t>(off),
               data(c + h).data.begin() + static_cast<std::ptrdiff_t>(off + len));
    const Slice sum(std::span<float>(acc), len);
    for (int k = 1; k < P; ++k) rules::axpy(sum, 1.0f, data(c + h + k).sub(off, len));
    if (op == CollectiveOp::kRingReduceScatter) {
      rules::copy(data(c).sub(off, len), sum);
    } else {
      for (int j = 0; j < P; ++j) rules::copy(data(j).sub(off, len), sum);
    }
  }
}

int CollectiveSim::ring_flow_steps(int P, int count) const {
  if (static_cast<long>(P) * count <= rings_.flow_budget) return count;
  return std::max(1, std::min(rings_.sample_steps, count / 2));
}

void CollectiveSim::ring(const CollectiveCall& call, int index) {
  const int P = call.group->size();
  auto inst = join(call, *call.group);
  inst->members[static_cast<std::size_t>(index)].data = call.data;
  // The last member to arrive does everyone's math: nobody's part ends before every member arrived.
  if (++inst->arrived == P && !call.data.data.empty()) ring_math(*inst, call.op, call.data.count);
  const RingSteps steps{call.op, P, call.data.count};
  const int flow_steps = ring_flow_steps(P, steps.count());
  if (flow_steps == steps.count()) {
    ring_flows(call, *inst, index, steps, flow_steps);
  } else if (flow_steps > 1) {
    ring_flows(call, *inst, index, steps, flow_steps);
    ring_rest(call, *inst, index, steps, flow_steps);
  } else {
    ring_sampled(call, *inst, index, steps);
  }
}

// As in the message version, step s is sent once step s - 1 was received from the left and added, and my
// own step s - 1 arrived; the additions overlap my own flow. A sender actor carries my flows, so that I can
// receive and add meanwhile.
void CollectiveSim::ring_flows(const CollectiveCall& call, Instance& inst, int r, const RingSteps& steps, int upto) {
  const int P = steps.P;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Member& left = inst.members[static_cast<std::size_t>(mod(r - 1, P))];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  sg4::Host* src = world_.host(call.self);
  sg4::Host* dst = world_.host(right);
  auto sender = start_actor("ring-flow", src, kCourierStackKiB, [&] {
    for (int s = 0; s < upto; ++s) {
      world_.wait_until(
          call.self, [&] { return me.steps_allowed > s; }, kForever);
      const std::uint64_t bytes = sizeof(float) * steps.sent(r, s);
      world_.account(call.self, right, bytes, 1);
      const double t0 = sg4::Engine::get_clock();
      if (src != dst) sg4::Comm::sendto(src, dst, bytes);
      if (upto < steps.count() && s >= upto / 2 && src != dst) {  // the second half: the rate of the rest
        me.flow_s += sg4::Engine::get_clock() - t0;
        me.latency_s += latency_s(src, dst, static_cast<double>(bytes));
        me.flow_floats += static_cast<double>(steps.sent(r, s));
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
    const std::size_t added = steps.added(r, s);
    if (added > 0 && call.compute != nullptr) {
      const double t0 = sg4::Engine::get_clock();
      call.compute->charge_elementwise(added, 3);
      me.add_s += sg4::Engine::get_clock() - t0;
      me.add_floats += static_cast<double>(added);
    }
    world_.wait_until(
        call.self, [&] { return me.steps_sent > s; }, kForever);
  }
  sender->join();
}

// After ring_flows ran the first `done` steps: the rest from the ring's pipeline, from where each member
// stands, at the rates its last flows had. My later additions are accounted as updates, as in ring_sampled.
void CollectiveSim::ring_rest(const CollectiveCall& call, Instance& inst, int r, const RingSteps& steps, int done) {
  const int P = steps.P;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  std::uint64_t sent_rest = 0, added_rest = 0;
  for (int s = done; s < steps.count(); ++s) sent_rest += steps.sent(r, s), added_rest += steps.added(r, s);
  world_.account(call.self, right, sizeof(float) * sent_rest, static_cast<std::uint64_t>(steps.count() - done));
  me.start_s = sg4::Engine::get_clock();
  if (++inst.sampled == P) {
    ring_pipeline(inst, steps, done);
    for (const Member& m : inst.members) world_.wake(m.rank);
  } else {
    world_.wait_until(
        call.self, [&] { return inst.sampled == P; }, kForever);
  }
  ring_finish(me, me.add_floats > 0 ? me.add_s * static_cast<double>(added_rest) / me.add_floats : 0,
              world_.host(call.self));
}

// Until my pipeline's end, the first `adds_s` of it accounted as updates (my additions after the sample).
void CollectiveSim::ring_finish(const Member& me, double adds_s, sg4::Host* host) {
  const double rest = me.done_s - sg4::Engine::get_clock();
  if (rest <= 0) return;
  {
    const TimeAccount::Scope updating(update_category(host));
    sg4::this_actor::sleep_for(std::min(adds_s, rest));
  }
  sg4::this_actor::sleep_until(me.done_s);
}

// 1. A sample of my first step: my flow to the right neighbour and, meanwhile, the addition of what my left
// neighbour sends in it. 2. The last member to be done runs the pipeline for all (ring_pipeline). 3. I end
// when the pipeline says, the time of my later additions accounted as updates.
void CollectiveSim::ring_sampled(const CollectiveCall& call, Instance& inst, int r, const RingSteps& steps) {
  const int P = steps.P;
  Member& me = inst.members[static_cast<std::size_t>(r)];
  const Rank right = call.group->world_rank(mod(r + 1, P));
  sg4::Host* src = world_.host(call.self);
  sg4::Host* dst = world_.host(right);
  const std::uint64_t added = steps.added_total(r);
  world_.account(call.self, right, sizeof(float) * steps.sent_total(r), static_cast<std::uint64_t>(steps.count()));

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
  sg4::CommPtr flow;
  if (src != dst) {
    const std::uint64_t bytes = sizeof(float) * steps.sent(r, 0);
    flow = sg4::Comm::sendto_async(src, dst, bytes);
    me.latency_s = latency_s(src, dst, static_cast<double>(bytes));
    me.flow_floats = static_cast<double>(steps.sent(r, 0));
    me.flows = 1;
  }
  const std::size_t added0 = steps.added(r, 0);
  if (added0 > 0 && call.compute != nullptr) {
    call.compute->charge_elementwise(added0, 3);
    me.add_s = sg4::Engine::get_clock() - sampled_at;
    me.add_floats = static_cast<double>(added0);
  }
  if (flow) {
    flow->wait();
    me.flow_s = flow->get_finish_time() - sampled_at;
  }

  if (++inst.sampled == P) {
    ring_pipeline(inst, steps, 0);
    for (const Member& m : inst.members) world_.wake(m.rank);
  } else {
    world_.wait_until(
        call.self, [&] { return inst.sampled == P; }, kForever);
  }
  ring_finish(me, added0 > 0 ? me.add_s * static_cast<double>(added - added0) / static_cast<double>(added0) : 0, src);
}

// The message version's timing (ring_flows): member r starts step s + 1 at
//   max(max(start(r, s), arrival(r - 1, s)) + addition(r, s), arrival(r, s)),
// where arrival(r, s) = start(r, s) + latency(r) + the floats it sends in step s x the seconds per float of
// its sampled flows, and an addition takes the sampled additions' time per float. Chunks have n / P floats or one
// more; the loops run over the members with the chunk index kept in range instead of a modulo per member.
void CollectiveSim::ring_pipeline(Instance& inst, const RingSteps& steps, int first) {
  const int P = steps.P;
  const auto p = static_cast<std::size_t>(P);
  const std::size_t extra = steps.n % p;                // chunks below `extra` are the big ones
  const auto small = static_cast<double>(steps.n / p);  // floats of a small chunk
  std::vector<double> start(p), arrival(p), wire_small(p), wire_big(p), add_small(p), add_big(p);
  for (std::size_t i = 0; i < p; ++i) {
    const Member& m = inst.members[i];
    const double per_float = m.flow_floats > 0 ? (m.flow_s - m.latency_s) / m.flow_floats : 0;
    const double latency = m.flows > 1 ? m.latency_s / m.flows : m.latency_s;
    const double add_per_float = m.add_floats > 0 ? m.add_s / m.add_floats : 0;
    start[i] = m.start_s;
    wire_small[i] = m.flow_s > 0 ? latency + per_float * small : 0;
    wire_big[i] = m.flow_s > 0 ? latency + per_float * (small + 1) : 0;
    add_small[i] = add_per_float * small;
    add_big[i] = add_per_float * (small + 1);
  }
  for (int s = first; s < steps.count(); ++s) {
    const auto sent_chunk0 = static_cast<std::size_t>(mod(steps.shift(s), P));  // member 0's
    for (std::size_t i = 0, c = sent_chunk0; i < p; ++i, c = c + 1 == p ? 0 : c + 1) {
      arrival[i] = start[i] + (c < extra ? wire_big[i] : wire_small[i]);
    }
    const bool adds = steps.adds(s);
    const std::size_t added_chunk0 = sent_chunk0 == 0 ? p - 1 : sent_chunk0 - 1;
    for (std::size_t i = 0, c = added_chunk0; i < p; ++i, c = c + 1 == p ? 0 : c + 1) {
      const double received = std::max(start[i], arrival[i == 0 ? p - 1 : i - 1]);
      const double add = adds ? (c < extra ? add_big[i] : add_small[i]) : 0;
      start[i] = std::max(received + add, arrival[i]);
    }
  }
  for (std::size_t i = 0; i < p; ++i) inst.members[i].done_s = start[i];
}

}  // namespace dts::sim
