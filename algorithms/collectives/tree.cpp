// Binomial trees (as MPICH's MPIR_Reduce_binomial / MPIR_Bcast_binomial), over group indices relative to
// the root. Reduce: in round k, members with bit k set send their partial sum to the member 2^k below them
// and drop out; a parent's children complete their subtrees a round apart, so their sends reach it in turn.
// Broadcast: the same tree walked from the root down, a parent serving its children in turn.
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {
namespace {
// A blocking send returns once delivered, and nothing else writes `data` meanwhile: read it in place.
const SendOptions kInPlace{.modeled_bytes = std::nullopt, .borrow = true};
}  // namespace

void tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag) {
  const int P = group.size();
  const int me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, "tree_reduce: caller is not in the group");
  if (P == 1 || detail::delegated(comm, &compute, group, data, root, tag, CollectiveOp::kTreeReduce)) return;
  const int vr = (me - root + P) % P;  // index relative to the root
  Vec inbox(data.count, data.real());
  for (int mask = 1; mask < P; mask <<= 1) {
    if (vr & mask) {  // 1. send my partial sum down the tree and stop
      comm.send(group.world_rank((vr - mask + root) % P), tag, data, kInPlace);
      return;
    }
    if (vr + mask < P) {  // 2. add the partial sum of the subtree rooted at vr + mask
      comm.recv(group.world_rank((vr + mask + root) % P), tag, inbox);
      rules::axpy(data, 1.0f, inbox);
      compute.charge_elementwise(data.count, 3);
    }
  }
}

void tree_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag) {
  const int P = group.size();
  const int me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, "tree_broadcast: caller is not in the group");
  if (P == 1 || detail::delegated(comm, nullptr, group, data, root, tag, CollectiveOp::kTreeBroadcast)) return;
  const int vr = (me - root + P) % P;
  // 1. Receive from the parent: the member that differs in my lowest set bit.
  int mask = 1;
  while (mask < P) {
    if (vr & mask) {
      comm.recv(group.world_rank((vr - mask + root) % P), tag, data);
      break;
    }
    mask <<= 1;
  }
  // 2. Forward to my children one after the other, largest subtree first, each send done (delivered)
  // before the next: the children do not share my link, and the whole costs lg P (alpha + n beta).
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < P) comm.send(group.world_rank((vr + mask + root) % P), tag, data, kInPlace);
  }
}

void tree_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  tree_reduce(comm, compute, group, data, 0, tag);
  tree_broadcast(comm, group, data, 0, tag + 1);
}

}  // namespace dts::collectives
