// One dimension (row or column) of BIDMach's grid on one node (papers/bidmach.md §3-4, §7): the node's
// DimensionNode, its Worker slots and, on the line's master node, the LineMaster, as one event loop (a Reactor)
// run by its own activity beside the learner.
//   LineMaster: after its node's learner has begun (polled every startup_poll_s), sends Start(0) to every member;
//   starts round r + 1 once ceil(round_quorum * p) members have completed round r, until max_rounds or, without
//   it, until every member's learner is done; when every started round is complete on every member and every
//   learner is done it sends Stop.
//   Member: on Start(r) fetches the model (under the model lock) and runs round r in slot r mod slots, forcing the
//   round still unfinished in that slot (so a node lags at most `slots` rounds); when round r completes it mixes the
//   line mean into the live model, m <- (1 - alpha) m + alpha mean, under the lock, and reports Complete(r).
// A changing membership (grid_master.hpp): the line comes from the GridMaster, versioned. A new version forces
// the rounds of the old one (their elastic steps apply), gives up every message of older versions (a round's
// messages travel as round version << b | r, the control messages as version << b, with b = 20 on the simulator
// and 15 on MPI, whose tags carry rounds below 2^19) and starts the new line at
// round 0, with no start-up poll. The LineMaster's stop waits for the GridMaster's End instead of the members'
// Done; a node that leaves gets Out, forces its rounds and ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/bidmach/grid_master.hpp"
#include "algorithms/collectives/quorum_allreduce.hpp"

namespace dts::bidmach {

// The grid's waits between rounds (a line of one, a LineMaster between rounds, the GridMaster's wait for news,
// a leaver's wait for the final members) may last as long as training. They wait in slices of this length:
// the MPI backend ends a wait without a timeout that sees no progress for its hang timeout (--hang-timeout,
// 300 s by default). A hung peer is still found by the waits of the rounds, which keep that limit.
inline constexpr double kPatienceSliceS = 60;

struct GridConfig {
  float alpha = 0.3f;                // elasticRate
  collectives::QuorumConfig quorum;  // theta_r, theta_c, maxChunkSize
  double round_quorum = 1;           // theta_a
  int slots = 3;                     // roundWorkerPerDimNum
  double startup_poll_s = 2;         // the communicator polls for the learner's first step
  std::uint32_t max_rounds = 0;      // rounds per line (maxRound); 0: until the line's learners are done
  bool train = true;                 // false: no learner, the rounds alone (the raw allreduce, B4)
  // The communicator's copies of the model between the GPU and the host at each round (the report's BIDMach:
  // its fetch copies the matrices to the host, its elastic step reads them back and writes them back, each a
  // synchronous cudaMemcpy of pageable memory that occupies the learner's GPU), at this rate in bytes/s; 0: the
  // model stays on the device and the fetch and the step are device passes.
  double host_copy_Bps = 0;
};

// What the learner and the two dimension loops of a node share.
struct NodeModel {
  Vec params;
  std::unique_ptr<Mutex> lock;  // BIDMach's per-matrix locks, as one lock over the model
  std::atomic<std::int64_t> learner_steps{0};
  std::atomic<bool> learner_done{false};
};

// Counts a dimension loop reports (Recorder::count, with the dimension's suffix).
struct DimStats {
  std::int64_t rounds = 0;              // rounds completed here (elastic steps)
  std::int64_t rounds_in_training = 0;  // of them, while the learner was still training
  std::int64_t forced = 0, short_reduced = 0, missing = 0;
  std::int64_t relayout_forced = 0;  // of the forced, by a new version of the line
  double allreduce_s = 0;            // summed over rounds, from the fetch to just before the elastic step
  double host_copy_s = 0;            // the model's copies between the GPU and the host (GridConfig::host_copy_Bps)
};

struct DimTags {
  collectives::QuorumTags quorum;
  Tag start = 0, complete = 0, done = 0, config = 0;
};
DimTags dim_tags(int dim);

class DimensionLoop {
 public:
  // `line`: the line's members (this node among them, two or more) and LineMaster; with a changing membership
  // (ctx.membership_changes) the line at version 0, and empty when the node is alone or not yet in the grid.
  DimensionLoop(Context& ctx, NodeModel& model, const GridConfig& cfg, int dim, const Line& line);
  ~DimensionLoop();
  // Runs until the LineMaster stops the line (and, with a changing membership, the GridMaster has sent End), or
  // the node is out of the grid.
  void run();
  // Tells the LineMaster this node's learner is done (the learner's activity calls it and waits the send).
  Request learner_done();
  const DimStats& stats() const { return stats_; }

 private:
  struct Slot;
  void post_start();
  void on_start(const Comm::Completion& got);
  void post_order();
  void on_order(const LineOrder& order);
  void adopt(const Line& line, Round version);  // force the rounds in flight, then run `line` at `version`
  void give_up_below(Round floor);              // every message of this dimension's rounds below `floor`
  bool active() const { return line_.size() >= 2; }
  void begin_round(std::uint32_t r);
  void finish_round(Slot& slot, ConstSlice mean);
  void host_copies(int models);  // `models` copies of the model between the GPU and the host
  void tidy();
  // LineMaster
  void master_begin();
  void post_complete();
  void post_done();
  void start_all(std::uint32_t r);
  bool more_rounds() const;  // whether the LineMaster starts another round
  void maybe_stop();
  void control(Rank to, Tag tag, std::vector<float> payload);

  Context& ctx_;
  NodeModel& model_;
  GridConfig cfg_;
  DimTags tags_;
  bool dynamic_;  // the membership changes (the GridMaster sends the lines)
  Group line_;
  Rank master_;
  bool is_master_;
  int round_bits_ = 20;           // a round id: version << round_bits_ | round
  Round version_ = 0, base_ = 0;  // base_: version_ << round_bits_, the first round id of this version
  Reactor reactor_;
  Reactor::Ticket start_ticket_ = 0, complete_ticket_ = 0, done_ticket_ = 0;
  Vec start_in_, complete_in_, done_in_, order_in_;
  bool ended_ = false, stop_received_ = false;
  std::vector<std::unique_ptr<Slot>> slots_, draining_;
  collectives::QuorumBuffers spare_;  // a drained round's buffers, for the next round
  std::vector<Request> control_out_;
  bool stopped_ = false;
  Round floor_ = 0;  // the rounds below it are given up (Comm::drop_stale)
  Round begun_ = 0;  // one past the last round begun here
  DimStats stats_;
  // LineMaster state
  std::uint32_t current_ = 0, started_ = 0;
  std::vector<int> completions_;  // per started round
  int members_done_ = 0;
  bool stop_sent_ = false;
};

}  // namespace dts::bidmach
