// The plans' interpreter over Comm: each stage as non-blocking messages, in the order the plan's contract
// gives (collective_plan.hpp). With a collective engine (the simulator's `collective` fidelity) the whole
// plan goes to it instead.
#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"

namespace dts::collectives {

bool run_plan(Comm& comm, Compute* compute, const Group& group, const CollectivePlan& plan, Slice data, Tag tag,
              ConstSlice send, const SendOptions& opts, bool survive) {
  const int me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, std::string(plan.name()) + ": caller is not in the group");
  DTS_ASSERT(plan.size() == group.size(), std::string(plan.name()) + ": plan and group differ in size");
  PlanCall call{.plan = &plan,
                .group = &group,
                .self = comm.rank(),
                .index = me,
                .data = data,
                .send = send,
                .modeled_bytes = opts.modeled_bytes,
                .borrow = opts.borrow,
                .tag = tag,
                .compute = compute};
  if (CollectiveEngine* engine = comm.collective_engine()) {
    engine->run(call);
    return true;
  }

  bool whole = true;
  const auto wait = [&](Request& r) {
    if (!survive) return r.wait_ok();
    const Status s = r.wait();
    if (s == Status::kPeerFailed) {
      whole = false;
    } else {
      require_ok(s, r.peer(), plan.name());
    }
  };
  std::vector<Request> rx, tx;
  for (int s = 0, stages = plan.stages(me); s < stages; ++s) {
    const PlanStage st = plan.stage(me, s);
    auto post_sends = [&] {
      for (const PlanSend& m : st.sends) {
        const ConstSlice from = m.from_input ? send : ConstSlice(data);
        SendOptions o{.modeled_bytes = std::nullopt, .borrow = st.sends_first ? opts.borrow : true};
        if (opts.modeled_bytes) o.modeled_bytes = call.bytes(m.chunk.count);
        tx.push_back(comm.isend(group.world_rank(m.peer), tag, from.sub(m.chunk.offset, m.chunk.count), o));
      }
    };
    if (st.sends_first) post_sends();
    for (const PlanRecv& m : st.recvs) {
      rx.push_back(comm.irecv(group.world_rank(m.peer), tag, data.sub(m.chunk.offset, m.chunk.count),
                              RecvOptions{.add = m.add}));
    }
    if (!st.sends_first) post_sends();
    for (Request& r : rx) wait(r);
    for (const PlanRecv& m : st.recvs) {
      if (m.add && compute != nullptr) compute->charge_reduce(m.chunk.count, 3);
    }
    for (Request& t : tx) wait(t);
    rx.clear();
    tx.clear();
  }
  return whole;
}

}  // namespace dts::collectives
