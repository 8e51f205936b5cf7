// A collective described once, as what each member does: a list of stages, each a few messages to and from
// other members of the group. Interpreters run it: over Comm as point-to-point messages (MPI, the
// simulator's `message` fidelity; algorithms/collectives/run_plan.cpp) and as SimGrid flows (the simulator's
// `collective` fidelity). A stage is posted whole, then completes in this order: wait its receives, charge
// the additions of those that add (Compute::charge_elementwise(count, 3) each), wait its sends. Messages
// between two members are matched in the order they were sent, so a stage needs no tag of its own.
// A stage may wait for a quorum of its receives instead of all (k of n; PlanStage::quorum). A numbered call
// (PlanCall::round) carries its round in every message's envelope, so that late messages of a round are
// never taken by another, and the collective fidelity pairs the members' calls by round: a member may skip
// one. Plans answer per member and per stage, on demand: at thousands of members nobody builds all of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/api/group.hpp"
#include "algorithms/api/vec.hpp"

namespace dts {

class Compute;

// Floats [offset, offset + count) of a member's buffer.
struct Chunk {
  std::size_t offset = 0, count = 0;
};

struct PlanSend {
  int peer = 0;  // group index
  Chunk chunk;
  bool from_input = false;  // from the call's separate input (PlanCall::send) instead of its data
};

struct PlanRecv {
  int peer = 0;  // group index
  Chunk chunk;   // of the data
  bool add = false;
};

struct PlanStage {
  std::vector<PlanSend> sends;
  std::vector<PlanRecv> recvs;
  // The receives may write what the sends read: the sends are posted first, and the receives land apart until
  // the stage's sends are done (never with a quorum). Otherwise receives are posted first. Sends read in place.
  bool sends_first = false;
  // 0: the stage waits for every receive. k > 0: for k of them; the receives complete by then are taken
  // (added or copied, in the order they arrived: k or more), the others cancelled. Only in a numbered call:
  // the messages of cancelled receives arrive late, and the member gives up the round when its part ends.
  std::size_t quorum = 0;
};

// A plan that is a uniform pipeline over the group's ring: in step s every member r sends the ring chunk
// (r + shift(s)) mod P of the P-way split (collectives::ring_chunk) to r + 1 and receives chunk
// (r + shift(s) - 1) mod P from r - 1, adding it when adds(s). Its stages are exactly these steps, so an
// interpreter may time the steps it does not run from the pipeline's recurrence (the collective fidelity's
// sampled rings).
class RingPipeline {
 public:
  virtual ~RingPipeline() = default;
  virtual int steps() const = 0;
  virtual int shift(int s) const = 0;
  virtual bool adds(int s) const = 0;
  // Floats member r sends, and adds, over steps [first, steps()).
  virtual std::size_t sent_floats(int r, int first) const = 0;
  virtual std::size_t added_floats(int r, int first) const = 0;
};

class CollectivePlan {
 public:
  virtual ~CollectivePlan() = default;
  // Names the collective; with the tag and the group it tells one collective's instances from another's.
  virtual const char* name() const = 0;
  virtual int size() const = 0;              // members
  virtual int stages(int member) const = 0;  // member: group index
  virtual PlanStage stage(int member, int s) const = 0;
  virtual const RingPipeline* ring_pipeline() const { return nullptr; }
};

// A plan's data movement without messages, in the message version's order: stages [0, stages) one after the
// other, in each every member's receives adding or copying their chunks straight from the sending member's data
// (`data`: the members' buffers, by group index). In place, so only for plans whose stages never write a chunk
// that they send (a ring's): the collective fidelity's sums of a ring pipeline, `dtsim bench overhead`'s ring.
void move_in_place(const CollectivePlan& plan, std::span<const Slice> data, int stages);

// One member's run of a plan. Every member of the group runs the same plan (same name, group, count, tag)
// in the same order.
struct PlanCall {
  const CollectivePlan* plan = nullptr;
  const Group* group = nullptr;
  Rank self = -1;   // world rank
  int index = -1;   // group index
  Slice data;       // in/out, as the collective defines
  ConstSlice send;  // the separate input of sends `from_input`
  // Bytes charged for a message of all data.count floats, proportionally for smaller ones (default 4 per float).
  std::optional<std::uint64_t> modeled_bytes;
  Tag tag = 0;
  // A numbered call: every member calls it with the same round, in rising rounds per tag (a member may skip
  // a round: then it gives up the round itself, Comm::drop_stale). Unnumbered calls pair in each member's
  // order of calls, so every member makes every one of them.
  std::optional<Round> round;
  Compute* compute = nullptr;  // charged the additions; null when the plan adds nothing

  std::uint64_t bytes(std::size_t count) const {
    if (!modeled_bytes) return sizeof(float) * count;
    return data.count == 0 ? *modeled_bytes : *modeled_bytes * count / data.count;
  }
};

}  // namespace dts
