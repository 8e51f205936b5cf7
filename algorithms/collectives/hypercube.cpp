// Recursive doubling (hypercube) allreduce as a plan: see HypercubePlan (plans.hpp).
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/collectives/plans.hpp"

namespace dts::collectives {

HypercubePlan::HypercubePlan(int P, std::size_t n) : P_(P), pof2_(1), n_(n) {
  while (pof2_ * 2 <= P_) pof2_ *= 2;
  rem_ = P_ - pof2_;
}

int HypercubePlan::stages(int member) const {
  int dims = 0;
  for (int mask = 1; mask < pof2_; mask <<= 1) ++dims;
  if (member >= 2 * rem_) return dims;
  return member % 2 == 0 ? 2 : dims + 2;  // folded: out and back; its partner: in, the dimensions, back
}

PlanStage HypercubePlan::stage(int member, int s) const {
  const Chunk all{0, n_};
  PlanStage st;
  if (member < 2 * rem_ && member % 2 == 0) {  // folded into member + 1, then receives the result from it
    if (s == 0) {
      st.sends.push_back({.peer = member + 1, .chunk = all});
    } else {
      st.recvs.push_back({.peer = member + 1, .chunk = all});
    }
    return st;
  }
  int newrank = member - rem_;
  if (member < 2 * rem_) {  // the odd member of a folded pair: its partner's vector first, the sum back last
    if (s == 0) {
      st.recvs.push_back({.peer = member - 1, .chunk = all, .add = true});
      return st;
    }
    if (s == stages(member) - 1) {
      st.sends.push_back({.peer = member - 1, .chunk = all});
      return st;
    }
    --s;
    newrank = member / 2;
  }
  const int partner = newrank ^ (1 << s);  // dimension s
  const int peer = partner < rem_ ? partner * 2 + 1 : partner + rem_;
  st.sends.push_back({.peer = peer, .chunk = all});
  st.recvs.push_back({.peer = peer, .chunk = all, .add = true});
  st.sends_first = true;  // the receive adds into what the send reads
  return st;
}

void hypercube_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, "hypercube_allreduce: caller is not in the group");
  if (group.size() == 1) return;
  run_plan(comm, &compute, group, HypercubePlan(group.size(), data.count), data, tag);
}

}  // namespace dts::collectives
