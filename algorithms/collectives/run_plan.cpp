// The plans' interpreter over Comm: each stage as non-blocking messages, in the order the plan's contract
// gives (collective_plan.hpp). With a collective engine (the simulator's `collective` fidelity) the whole
// plan goes to it instead.
#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"

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
                .borrow = opts.borrow,
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
  for (int s = 0, stages = plan.stages(me); s < stages; ++s) {
    const PlanStage st = plan.stage(me, s);
    DTS_ASSERT(st.quorum <= st.recvs.size(), std::string(plan.name()) + ": a quorum larger than the receives");
    DTS_ASSERT(st.quorum == 0 || opts.round, std::string(plan.name()) + ": a quorum stage needs a numbered round");
    auto post_sends = [&] {
      for (const PlanSend& m : st.sends) {
        const ConstSlice from = m.from_input ? opts.send : ConstSlice(data);
        SendOptions o{.modeled_bytes = std::nullopt, .borrow = st.sends_first ? opts.borrow : true, .round = round};
        if (opts.modeled_bytes) o.modeled_bytes = call.bytes(m.chunk.count);
        tx.push_back(comm.isend(group.world_rank(m.peer), tag, from.sub(m.chunk.offset, m.chunk.count), o));
      }
    };
    if (st.sends_first) post_sends();
    for (const PlanRecv& m : st.recvs) {
      rx.push_back(comm.irecv(group.world_rank(m.peer), tag, data.sub(m.chunk.offset, m.chunk.count),
                              RecvOptions{.add = m.add, .round = round}));
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
    rx.clear();
    tx.clear();
  }
  if (cancelled) comm.drop_stale(tag, round + 1);
  return whole;
}

}  // namespace dts::collectives
