// An optional hook of the seam: a backend that can run a whole collective itself instead of as the
// point-to-point messages of algorithms/collectives. The simulator's `collective` fidelity (DESIGN.md §3)
// provides one, which charges a collective to the modeled network as a few aggregated flows; it is null on
// MPI and in `message` fidelity. Algorithms never call it: the free functions of algorithms/collectives
// delegate to it when Comm::collective_engine() is not null, so one algorithm source serves both fidelities.
#pragma once

#include <cstdint>
#include <optional>

#include "algorithms/api/group.hpp"
#include "algorithms/api/vec.hpp"

namespace dts {

class Compute;

// The collectives of algorithms/collectives, with the semantics documented there.
enum class CollectiveOp : std::uint8_t {
  kRingAllreduce,      // data: in/out
  kRingReduceScatter,  // data: in; member i's ring chunk i holds the sum afterwards, other chunks are scratch
  kRingAllgather,      // data: member i's ring chunk i in; every chunk out
  kTreeReduce,         // data: in; the root's data holds the sum afterwards, other members' data is scratch
  kTreeBroadcast,      // data: the root's data in; every member's out
  kPairwiseExchange,   // send: mine, to `peer`; data: receives the peer's `send`
};

// One member's call. Every member of the group makes the same call (op, group, count, root, tag) in the
// same order, as with the message versions.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kRingAllreduce;
  Rank self = -1;                // the caller's world rank
  const Group* group = nullptr;  // null for kPairwiseExchange
  Rank peer = -1;                // kPairwiseExchange: the partner's world rank
  Slice data;
  ConstSlice send;                             // kPairwiseExchange
  std::optional<std::uint64_t> modeled_bytes;  // kPairwiseExchange: bytes charged per direction
  int root = 0;                                // tree ops: group index of the root
  Tag tag = 0;
  Compute* compute = nullptr;  // reductions: charged what the message version charges
};

class CollectiveEngine {
 public:
  virtual ~CollectiveEngine() = default;
  // Blocks the calling member until its part of the collective is complete, as the message version would.
  // Results are bit for bit those of the message version.
  virtual void run(const CollectiveCall& call) = 0;
};

}  // namespace dts
