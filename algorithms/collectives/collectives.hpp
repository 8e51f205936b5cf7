// Collectives built from point-to-point messages of the seam, so that the simulator charges every message
// to the modeled network and the MPI backend runs exactly the same sequence. Every member of the group calls
// the same collective in the same order with the same count. Reductions are sums, in a fixed order, so
// results are reproducible bit for bit; the elementwise additions are charged to the member's device.
#pragma once

#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/group.hpp"

namespace dts::collectives {

enum class AllreduceAlgo { kRing, kTree };
// Parses "ring" / "tree"; throws ConfigError naming `where`.
AllreduceAlgo parse_allreduce_algo(const std::string& name, const std::string& where);

// Bandwidth-optimal ring (reduce-scatter then allgather; Patarasuk & Yuan): 2 (P-1) messages of
// count/P floats per member.
void ring_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
// Binomial-tree reduce to group index 0, then binomial-tree broadcast: 2 ceil(log2 P) rounds of full-size
// messages.
void tree_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
void allreduce(AllreduceAlgo algo, Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);

// Binomial-tree sum to the member at group index `root`; other members' data is scratch afterwards.
void tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag);
// Binomial-tree broadcast of the root's data.
void tree_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag);

}  // namespace dts::collectives
