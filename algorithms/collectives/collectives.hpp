// Collectives built from point-to-point messages of the seam, so that the simulator charges every message
// to the modeled network and the MPI backend runs exactly the same sequence. Every member of the group calls
// the same collective in the same order with the same count. Reductions are sums, in a fixed order, so
// results are reproducible bit for bit; the elementwise additions are charged to the member's device.
// Each collective is a plan (plans.hpp) run by run_plan: as messages over the Comm, or, when the Comm has a
// collective engine (the simulator's `collective` fidelity), by that engine, which reproduces the results
// bit for bit.
#pragma once

#include <utility>

#include "algorithms/api/collective_plan.hpp"
#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/group.hpp"

namespace dts::collectives {

// kAuto: the choice Open MPI's fixed decision makes (coll/tuned before 4.0; SMPI's allreduce:ompi), from the
// message's size alone, so that every member and both backends choose alike: the hypercube below 10,000 bytes
// (latency-bound: lg P rounds), the ring above when there are more floats than members, else the tree.
enum class AllreduceAlgo { kRing, kTree, kHypercube, kAuto };
// Parses "ring" / "tree" / "hypercube" / "auto"; throws ConfigError naming `where`.
AllreduceAlgo parse_allreduce_algo(const std::string& name, const std::string& where);
const char* to_string(AllreduceAlgo algo);

// Chunk i of the P-way ring split of n floats, as {offset, count}: the first n % P chunks get one extra.
std::pair<std::size_t, std::size_t> ring_chunk(std::size_t n, int P, int i);

// Bandwidth-optimal ring (reduce-scatter then allgather; Patarasuk & Yuan): 2 (P-1) messages of
// count/P floats per member.
void ring_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
// The ring's first half: P-1 messages per member; afterwards member i's ring chunk i holds the sum over the
// group and the other chunks are scratch.
void ring_reduce_scatter(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
// The ring's second half: member i contributes its ring chunk i; afterwards every member holds every chunk.
void ring_allgather(Comm& comm, const Group& group, Slice data, Tag tag);
// Binomial-tree reduce to group index 0, then binomial-tree broadcast: 2 ceil(log2 P) rounds of full-size
// messages.
void tree_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
// Recursive doubling (MPICH's recursive-doubling allreduce): lg P rounds of full-size messages exchanged
// with a partner and added; a group that is not a power of two first folds its extra members into partners
// (one message each way more for them).
void hypercube_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
void allreduce(AllreduceAlgo algo, Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag);
// What kAuto runs for `count` floats over `members` (any other algo: itself).
AllreduceAlgo resolve_allreduce_algo(AllreduceAlgo algo, std::size_t count, int members);

// Binomial-tree sum to the member at group index `root`; other members' data is scratch afterwards.
void tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag);
// Binomial-tree broadcast of the root's data.
void tree_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag);

// Both directions between two partners at once, as gossip algorithms do: sends `mine` to `peer` and
// receives the peer's vector into `theirs` (same count; they may alias). Both partners call it.
// modeled_bytes: SendOptions::modeled_bytes.
void pairwise_exchange(Comm& comm, Rank peer, ConstSlice mine, Slice theirs, Tag tag,
                       std::optional<std::uint64_t> modeled_bytes = std::nullopt);

// How a member runs a plan (run_plan).
struct PlanOptions {
  ConstSlice send;  // the input of sends `from_input`
  // Bytes charged for a message of all data.count floats (default 4 per float).
  std::optional<std::uint64_t> modeled_bytes;
  // An operation with a peer that failed ends, not the plan (the same posts and waits in the same order go on);
  // run_plan then returns false. Without it a failed peer throws. The collective fidelity has no failures.
  bool survive = false;
  std::optional<Round> round;  // a numbered call (PlanCall::round); needed by quorum stages
};

// Runs the calling member's part of `plan` among `group` (the caller's group index is its member). Returns false
// if an operation ended on a failed peer (PlanOptions::survive). A numbered part that waited for a quorum gives
// up its round at the end (Comm::drop_stale(tag, round + 1)): the messages of its cancelled receives are dropped.
bool run_plan(Comm& comm, Compute* compute, const Group& group, const CollectivePlan& plan, Slice data, Tag tag,
              const PlanOptions& opts = {});

// Added for AGD (issue 16). Hierarchical ring (hierarchical_ring.cpp): the group is nodes of `per_node`
// consecutive members; ring reduce-scatter inside each node, ring allreduce of each chunk across the nodes,
// ring allgather inside each node. per_node must divide the group's size; 1 or the whole group: a flat ring.
void hierarchical_ring_allreduce(Comm& comm, Compute& compute, const Group& group, int per_node, Slice data, Tag tag);

}  // namespace dts::collectives
