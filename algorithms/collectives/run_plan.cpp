// The plans' interpreter over Comm: each stage as non-blocking messages, in the order the plan's contract
// gives (collective_plan.hpp). With a collective engine (the simulator's `collective` fidelity) the whole
// plan goes to it instead.
#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"

namespace dts::collectives {

void run_plan(Comm& comm, Compute* compute, const Group& group, const CollectivePlan& plan, Slice data, Tag tag,
              ConstSlice send, const SendOptions& opts) {
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
  if (CollectiveEngine* engine = comm.collective_engine()) return engine->run(call);

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
    for (Request& r : rx) r.wait_ok();
    for (const PlanRecv& m : st.recvs) {
      if (m.add && compute != nullptr) compute->charge_elementwise(m.chunk.count, 3);
    }
    for (Request& t : tx) t.wait_ok();
    rx.clear();
    tx.clear();
  }
}

}  // namespace dts::collectives
