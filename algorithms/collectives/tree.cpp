// Binomial trees (as MPICH's MPIR_Reduce_binomial / MPIR_Bcast_binomial), over group indices relative to
// the root. Reduce: in round k, members with bit k set send their partial sum to the member 2^k below them
// and drop out; a parent's children complete their subtrees a round apart, so their sends reach it in turn.
// Broadcast: the same tree walked from the root down, a parent serving its children in turn, each send done
// (delivered) before the next: the children do not share my link, and the whole costs lg P (alpha + n beta).
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/collectives/plans.hpp"

namespace dts::collectives {

int TreeReducePlan::stages(int member) const {
  const int vr = (member - root_ + P_) % P_;
  int count = 0;
  for (int mask = 1; mask < P_; mask <<= 1) {
    if (vr & mask) return count + 1;
    if (vr + mask < P_) ++count;
  }
  return count;
}

PlanStage TreeReducePlan::stage(int member, int s) const {
  const int vr = (member - root_ + P_) % P_;
  PlanStage st;
  for (int mask = 1, k = 0; mask < P_; mask <<= 1) {
    if (vr & mask) {  // 1. send my partial sum down the tree and stop
      st.sends.push_back({.peer = (vr - mask + root_) % P_, .chunk = {0, n_}});
      break;
    }
    if (vr + mask < P_ && k++ == s) {  // 2. add the partial sum of the subtree rooted at vr + mask
      st.recvs.push_back({.peer = (vr + mask + root_) % P_, .chunk = {0, n_}, .add = true});
      break;
    }
  }
  return st;
}

int TreeBroadcastPlan::parent_mask(int vr) const {
  int mask = 1;
  while (mask < P_ && !(vr & mask)) mask <<= 1;
  return mask;
}

int TreeBroadcastPlan::stages(int member) const {
  const int vr = (member - root_ + P_) % P_;
  const int up = parent_mask(vr);
  int count = up < P_ ? 1 : 0;
  for (int mask = up >> 1; mask > 0; mask >>= 1) count += vr + mask < P_ ? 1 : 0;
  return count;
}

PlanStage TreeBroadcastPlan::stage(int member, int s) const {
  const int vr = (member - root_ + P_) % P_;
  const int up = parent_mask(vr);
  PlanStage st;
  if (up < P_ && s-- == 0) {  // 1. receive from the parent: the member that differs in my lowest set bit
    st.recvs.push_back({.peer = (vr - up + root_) % P_, .chunk = {0, n_}});
    return st;
  }
  for (int mask = up >> 1; mask > 0; mask >>= 1) {  // 2. my children, largest subtree first
    if (vr + mask < P_ && s-- == 0) {
      st.sends.push_back({.peer = (vr + mask + root_) % P_, .chunk = {0, n_}});
      break;
    }
  }
  return st;
}

void tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, "tree_reduce: caller is not in the group");
  if (group.size() == 1) return;
  run_plan(comm, &compute, group, TreeReducePlan(group.size(), root, data.count), data, tag);
}

void tree_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, "tree_broadcast: caller is not in the group");
  if (group.size() == 1) return;
  run_plan(comm, nullptr, group, TreeBroadcastPlan(group.size(), root, data.count), data, tag);
}

// One tag for both halves: the reduce sends to parents, the broadcast to children, so no message of one can
// match a receive of the other.
void tree_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  tree_reduce(comm, compute, group, data, 0, tag);
  tree_broadcast(comm, group, data, 0, tag);
}

}  // namespace dts::collectives
