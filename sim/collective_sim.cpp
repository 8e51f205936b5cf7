// CollectiveSim: joining a plan's instance, latencies, and plans run stage by stage (ring pipelines:
// collective_pipeline.cpp).
#include "sim/collective_sim.hpp"

#include <algorithm>

#include "algorithms/api/compute.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "core/hash.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

const char* to_string(Fidelity f) { return f == Fidelity::kMessage ? "message" : "collective"; }

CollectiveSim::CollectiveSim(SimWorld& world, RingSampling rings, LineRoundTiming lines)
    : world_(world), rings_(rings), lines_(world, lines, routes_) {}

std::shared_ptr<CollectiveSim::Instance> CollectiveSim::join(const PlanCall& call) {
  const std::span<const Rank> ranks = call.group->members();
  const Key key{fnv1a(call.plan->name()), call.tag, call.group->hash(), static_cast<int>(ranks.size())};
  const bool numbered = call.round.has_value();
  const std::uint64_t seq = numbered ? *call.round : next_seq_[{key, call.self}]++;
  const auto at = std::make_tuple(key, numbered, seq);
  auto& slot = open_[at];
  if (!slot) {
    slot = std::make_shared<Instance>();
    slot->members.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) slot->members[i].rank = ranks[i];
  }
  std::shared_ptr<Instance> inst = slot;
  if (++inst->joined == static_cast<int>(ranks.size())) open_.erase(at);  // every member holds it now
  return inst;
}

std::unique_ptr<LineRoundPart> CollectiveSim::line_round(const LineRoundSpec& spec) {
  return lines_.join(spec, spec.line->world_rank(spec.index));
}

void CollectiveSim::run(const PlanCall& call) {
  DTS_ASSERT(call.plan != nullptr && call.group != nullptr, "collective without a plan or a group");
  TimeAccount* account = world_.time_account();
  const TimeAccount::Scope accounted(
      account, account != nullptr ? account->collective_category(world_, call.self, *call.group) : TimeCategory::kIdle);
  auto inst = join(call);
  if (const RingPipeline* ring = call.plan->ring_pipeline()) return pipeline(call, *inst, *ring);
  stages(call, *inst);
}

// Stage by stage, as the message version: a stage's flows start when it begins; then its receives wait for
// their flows (the peer's n-th flow to me is my n-th receive from it), its additions are charged, and its
// own flows must have arrived. A flow blocks its sender unless the stage adds, where an actor of its own
// carries it so that the additions overlap it.
void CollectiveSim::stages(const PlanCall& call, Instance& inst) {
  const CollectivePlan& plan = *call.plan;
  Member& me = inst.members[static_cast<std::size_t>(call.index)];
  me.data = call.data;
  const bool real = !call.data.data.empty();
  TimeAccount* account = world_.time_account();
  std::vector<Flow*> mine;
  for (int s = 0, count = plan.stages(call.index); s < count; ++s) {
    const PlanStage st = plan.stage(call.index, s);
    bool adds = false;
    for (const PlanRecv& m : st.recvs) adds = adds || m.add;
    // 1. My messages: a copy of what they carry, now, before my receives can write it.
    mine.clear();
    for (const PlanSend& m : st.sends) {
      Flow& flow = me.sent.emplace_back();
      flow.to = m.peer;
      if (real) {
        const ConstSlice from = (m.from_input ? call.send : ConstSlice(call.data)).sub(m.chunk.offset, m.chunk.count);
        flow.payload.assign(from.data.begin(), from.data.end());
      }
      mine.push_back(&flow);
    }
    for (std::size_t i = 0; i < mine.size(); ++i) {
      Flow* flow = mine[i];
      const Rank to = inst.members[static_cast<std::size_t>(flow->to)].rank;
      const std::uint64_t bytes = call.bytes(st.sends[i].chunk.count);
      world_.account(call.self, to, bytes, 1);
      if (account != nullptr) flow->trace = account->trace_send(world_.host(call.self), world_.host(to));
      auto carry = [this, self = call.self, flow, to, bytes, adds] {
        if (world_.host(self) != world_.host(to)) world_.wires().carry(world_.host(self), world_.host(to), bytes);
        TimeAccount::arrived(flow->trace.get());
        flow->delivered = true;
        flow->arrival = ++arrivals_;
        world_.wake(to);
        if (adds) world_.wake(self);  // carried by an actor of its own: I may be waiting for it
      };
      if (adds) {
        world_.couriers().run(world_.host(call.self), carry);
      } else {
        carry();
      }
    }
    // 2. My receives: each waits for its flow (the peer's n-th to me is my n-th receive from it) and takes it,
    // in order; or, with a quorum, the flows that have arrived once `quorum` have, in the order they arrived.
    std::vector<Flow*> flows(st.recvs.size(), nullptr);
    std::vector<int> nth(st.recvs.size());
    for (std::size_t i = 0; i < st.recvs.size(); ++i) {
      const int peer = st.recvs[i].peer;
      auto taken = std::find_if(me.taken.begin(), me.taken.end(), [&](const auto& t) { return t.first == peer; });
      if (taken == me.taken.end()) taken = me.taken.insert(me.taken.end(), {peer, 0});
      nth[i] = taken->second++;
    }
    const auto arrived = [&](std::size_t i) {
      if (flows[i] == nullptr) {
        int seen = 0;
        for (Flow& f : inst.members[static_cast<std::size_t>(st.recvs[i].peer)].sent) {
          if (f.to == call.index && seen++ == nth[i]) {
            flows[i] = &f;
            break;
          }
        }
      }
      return flows[i] != nullptr && flows[i]->delivered;
    };
    const auto take = [&](std::size_t i) {
      if (!real) return;
      const PlanRecv& m = st.recvs[i];
      const Slice into = call.data.sub(m.chunk.offset, m.chunk.count);
      const ConstSlice got(std::span<const float>(flows[i]->payload), m.chunk.count);
      m.add ? rules::axpy(into, 1.0f, got) : rules::copy(into, got);
      std::vector<float>().swap(flows[i]->payload);
    };
    std::vector<std::size_t> took;
    if (st.quorum == 0) {
      for (std::size_t i = 0; i < st.recvs.size(); ++i) {
        if (account != nullptr) account->wait_begin();
        world_.wait_until(
            call.self, [&] { return arrived(i); }, kForever);
        if (account != nullptr) account->wait_end(flows[i]->trace.get());
        take(i);
        took.push_back(i);
      }
    } else {
      const auto quorum = [&] {
        took.clear();
        for (std::size_t i = 0; i < st.recvs.size(); ++i) {
          if (arrived(i)) took.push_back(i);
        }
        return took.size() >= st.quorum;
      };
      if (account != nullptr) account->wait_begin();
      world_.wait_until(call.self, quorum, kForever);
      std::sort(took.begin(), took.end(), [&](auto a, auto b) { return flows[a]->arrival < flows[b]->arrival; });
      if (account != nullptr) account->wait_end(flows[took[st.quorum - 1]]->trace.get());
      for (std::size_t i : took) take(i);
    }
    for (std::size_t i : took) {
      const PlanRecv& m = st.recvs[i];
      if (m.add && call.compute != nullptr) call.compute->charge_reduce(m.chunk.count, 3);
    }
    // 3. My flows arrived (those carried by actors of their own).
    auto sent = [&] { return std::all_of(mine.begin(), mine.end(), [](const Flow* f) { return f->delivered; }); };
    if (!sent()) world_.wait_until(call.self, sent, kForever);
  }
}

}  // namespace dts::sim
