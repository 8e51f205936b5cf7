// Hierarchical ring allreduce (PowerAI DDL's form, papers/gossipgrad.md §3.2): the group's members are nodes of
// `per_node` consecutive members. A ring reduce-scatter inside each node leaves local member i with the node's
// sum of ring chunk i; the members with local index i on every node ring-allreduce that chunk across the
// nodes; a ring allgather inside each node spreads the chunks again. Each phase is an existing collective:
// inter-node traffic is 2 (nodes - 1) / nodes of the chunk per member, a per_node-th of a flat ring's.
#include <vector>

#include "algorithms/collectives/collectives.hpp"

namespace dts::collectives {

void hierarchical_ring_allreduce(Comm& comm, Compute& compute, const Group& group, int per_node, Slice data, Tag tag) {
  const int P = group.size(), me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, "hierarchical_ring_allreduce: caller is not in the group");
  DTS_ASSERT(per_node >= 1 && P % per_node == 0, "hierarchical_ring_allreduce: group size not a multiple of per_node");
  const int nodes = P / per_node;
  if (per_node == 1 || nodes == 1) return ring_allreduce(comm, compute, group, data, tag);
  const int node = me / per_node, local = me % per_node;
  std::vector<Rank> in_node, across;
  for (int i = 0; i < per_node; ++i) in_node.push_back(group.world_rank(node * per_node + i));
  for (int k = 0; k < nodes; ++k) across.push_back(group.world_rank(k * per_node + local));
  const Group node_group(std::move(in_node)), across_group(std::move(across));
  ring_reduce_scatter(comm, compute, node_group, data, tag);
  const auto [offset, count] = ring_chunk(data.count, per_node, local);
  ring_allreduce(comm, compute, across_group, data.sub(offset, count), tag);
  ring_allgather(comm, node_group, data, tag);
}

}  // namespace dts::collectives
