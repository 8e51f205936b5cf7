// The plans' interpreter over Comm: each stage as non-blocking messages, in the order the plan's contract
// gives (collective_plan.hpp). With a collective engine (the simulator's `collective` fidelity) the whole
// plan goes to it instead.
#include <memory>

#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {

bool run_plan(Comm& comm, Compute* compute, const Group& group, const CollectivePlan& plan, Slice data, Tag tag,
              const PlanOptions& opts) {
  const int me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, std::string(plan.name()) + ": caller is not in the group");
  DTS_ASSERT(plan.size() == group.size(), std::string(plan.name()) + ": plan and group differ in size");
  DTS_ASSERT(!opts.round || *opts.round < comm.max_round(), std::string(plan.name()) + ": round out of range");
  PlanCall call{.plan = &plan,
                .group = &group,
                .self = comm.rank(),
                .index = me,
                .data = data,
                .send = opts.send,
                .modeled_bytes = opts.modeled_bytes,
                .tag = tag,
                .round = opts.round,
                .compute = compute};
  if (CollectiveEngine* engine = comm.collective_engine()) {
    engine->run(call);
    return true;
  }

  const Round round = opts.round.value_or(0);
  bool whole = true, cancelled = false;
  // Whether an operation ended well; with `survive`, one that ended on a failed peer did not, and the plan
  // goes on. Otherwise anything but kOk throws (as Request::wait_ok). `failed`: the peer that failed.
  const auto ended = [&](Status s, Rank failed, Rank peer) {
    if (s == Status::kOk) return true;
    if (!opts.survive) require_ok(s, s == Status::kPeerFailed ? failed : -1, "");
    if (s != Status::kPeerFailed) require_ok(s, peer, plan.name());
    whole = false;
    return false;
  };
  const auto wait = [&](Request& r) {
    const Status s = r.wait();
    return s == Status::kOk || ended(s, r.source(), r.peer());
  };
  std::vector<Request> rx, tx;
  std::vector<char> taken;
  std::vector<Slice> into;         // each receive's buffer: its chunk of data, or its place in `apart`
  std::unique_ptr<float[]> apart;  // see below; uninitialized, MPI or the simulator fills it
  std::size_t apart_floats = 0;
  for (int s = 0, stages = plan.stages(me); s < stages; ++s) {
    const PlanStage st = plan.stage(me, s);
    DTS_ASSERT(st.quorum <= st.recvs.size(), std::string(plan.name()) + ": a quorum larger than the receives");
    DTS_ASSERT(st.quorum == 0 || opts.round, std::string(plan.name()) + ": a quorum stage needs a numbered round");
    DTS_ASSERT(!st.sends_first || st.quorum == 0, std::string(plan.name()) + ": a quorum in a stage that sends first");
    // A stage whose receives may write what its sends read, in real numerics: the receives land apart and go
    // into data (added or copied, in post order) once the sends are done, so the sends read data in place, not
    // a snapshot (and an adding receive lands in one buffer of ours, not in one of the Comm's as well).
    const bool land_apart = st.sends_first && !data.data.empty();
    into.clear();
    if (land_apart) {
      std::size_t floats = 0;
      for (const PlanRecv& m : st.recvs) floats += m.chunk.count;
      if (floats > apart_floats) {
        apart.reset(new float[floats]);
        apart_floats = floats;
      }
      floats = 0;
      for (const PlanRecv& m : st.recvs) {
        into.emplace_back(std::span<float>(apart.get() + floats, m.chunk.count));
        floats += m.chunk.count;
      }
    } else {
      for (const PlanRecv& m : st.recvs) into.push_back(data.sub(m.chunk.offset, m.chunk.count));
    }
    auto post_sends = [&] {
      for (const PlanSend& m : st.sends) {
        const ConstSlice from = m.from_input ? opts.send : ConstSlice(data);
        SendOptions o{.modeled_bytes = std::nullopt, .borrow = true, .round = round};  // unchanged until waited
        if (opts.modeled_bytes) o.modeled_bytes = call.bytes(m.chunk.count);
        tx.push_back(comm.isend(group.world_rank(m.peer), tag, from.sub(m.chunk.offset, m.chunk.count), o));
      }
    };
    if (st.sends_first) post_sends();
    for (std::size_t i = 0; i < st.recvs.size(); ++i) {
      const PlanRecv& m = st.recvs[i];
      rx.push_back(
          comm.irecv(group.world_rank(m.peer), tag, into[i], RecvOptions{.add = m.add && !land_apart, .round = round}));
    }
    if (!st.sends_first) post_sends();
    taken.assign(rx.size(), 0);
    if (st.quorum == 0) {
      for (std::size_t i = 0; i < rx.size(); ++i) taken[i] = wait(rx[i]);
    } else {
      for (std::size_t got = 0, open = rx.size(); got < st.quorum && open > 0; --open) {
        const Comm::Completion c = comm.wait_any(rx);
        taken[c.index] = ended(c.status, c.source, c.source);
        got += taken[c.index];
      }
      for (std::size_t i = 0; i < rx.size(); ++i) {
        if (!rx[i].valid()) continue;
        rx[i].cancel();  // one whose message is already landing completes instead
        taken[i] = rx[i].wait() == Status::kOk;
        cancelled = cancelled || !taken[i];
      }
    }
    for (std::size_t i = 0; i < st.recvs.size(); ++i) {
      if (taken[i] && st.recvs[i].add && compute != nullptr) compute->charge_reduce(st.recvs[i].chunk.count, 3);
    }
    for (Request& t : tx) wait(t);
    for (std::size_t i = 0; land_apart && i < st.recvs.size(); ++i) {
      const Slice to = data.sub(st.recvs[i].chunk.offset, st.recvs[i].chunk.count);
      if (taken[i]) st.recvs[i].add ? rules::axpy(to, 1.0f, into[i]) : rules::copy(to, into[i]);
    }
    rx.clear();
    tx.clear();
  }
  if (cancelled) comm.drop_stale(tag, round + 1);
  return whole;
}

}  // namespace dts::collectives
