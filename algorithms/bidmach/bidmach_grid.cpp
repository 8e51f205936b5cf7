// BIDMach's asynchronous elastic averaging over a 2-D grid allreduce (Peng 2018, papers/bidmach.md): every node
// trains its own replica without pause (the learner) while, per grid dimension, a communicator runs quorum
// allreduce rounds over the node's line and mixes each line mean into the live model (dimension_loop.hpp). The
// grid is laid out as Dynamic2DGridLayout lays out nodes joining in rank order (grid_layout.hpp). The learner holds
// the model lock for each forward-backward pass and optimizer step; the communicator for its fetch and each
// elastic step. The final model is the nodes' average; rank 0's own model is evaluated beside it.
// A changing membership (a scenario's joins and leaves): rank 0 also runs the GridMaster (grid_master.hpp); a
// node that joins tells it and trains from its own initial model until its lines come; a node whose time to leave
// has come stops training and tells it; the final average is over the nodes in the grid at the end.
// Reported counts (summary.json counters, summed over the nodes; _row / _column per dimension): rounds completed
// (elastic steps), of them during training (the effective elastic period is training steps / those), rounds
// forced, chunks reduced short of a full line and chunks taken from the node's own copy, the allreduce time in
// microseconds, and the learner's time waiting for the model lock.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/bidmach/dimension_loop.hpp"
#include "algorithms/bidmach/grid_master.hpp"
#include "algorithms/gossip_family.hpp"

namespace dts {
namespace {

using bidmach::DimensionLoop;
using bidmach::GridConfig;
using bidmach::NodeModel;

std::int64_t micros(double seconds) { return static_cast<std::int64_t>(seconds * 1e6 + 0.5); }

void report(Context& ctx, const char* dim, const bidmach::DimStats& s) {
  const std::string d = dim;
  ctx.recorder.count("rounds_" + d, s.rounds);
  ctx.recorder.count("rounds_in_training_" + d, s.rounds_in_training);
  ctx.recorder.count("rounds_forced_" + d, s.forced);
  ctx.recorder.count("chunks_short_reduced_" + d, s.short_reduced);
  ctx.recorder.count("chunks_missing_" + d, s.missing);
  ctx.recorder.count("allreduce_us_" + d, micros(s.allreduce_s));
  if (s.host_copy_s > 0) ctx.recorder.count("host_copy_us_" + d, micros(s.host_copy_s));
  ctx.recorder.count("rounds_forced_relayout_" + d, s.relayout_forced);
}

// The grid the ranks start from, laid out once for all of a run's ranks that share it (the simulator's): each
// laying out all W nodes itself was W^2 of time and memory, 14 GB at 16,384 workers.
class StartGrid {
 public:
  std::shared_ptr<const bidmach::GridView> get(int ranks, int dims, const std::vector<Rank>& later) {
    if (view_ == nullptr || ranks_ != ranks || dims_ != dims || later_ != later) {
      view_ = std::make_shared<const bidmach::GridView>(bidmach::initial_grid(ranks, dims, later));
      ranks_ = ranks;
      dims_ = dims;
      later_ = later;
    }
    return view_;
  }

 private:
  std::shared_ptr<const bidmach::GridView> view_;
  int ranks_ = 0, dims_ = 0;
  std::vector<Rank> later_;
};

void grid_rank(Context& ctx, const GridConfig& cfg, int dims, StartGrid& start) {
  Compute& compute = ctx.compute;
  const Rank me = ctx.comm.rank();
  NodeModel model;
  model.params = compute.make_vec();
  model.lock = ctx.node.make_mutex();
  compute.init_params(model.params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, model.params);

  // The lines: a 2-D grid laid out as the GridMaster lays out nodes joining in rank order (those present from
  // the start), or (dims 1) one line of every node, mastered by rank 0, or (dims 3, 4) a d-dimensional grid.
  const bool dynamic = ctx.membership_changes;
  const std::shared_ptr<const bidmach::GridView> grid = start.get(ctx.comm.size(), dims, ctx.joining);
  std::unique_ptr<Activity> grid_master;
  if (dynamic && me == 0) grid_master = ctx.node.spawn("bidmach-grid", [&ctx, grid] { run_grid_master(ctx, *grid); });
  if (dynamic && std::binary_search(ctx.joining.begin(), ctx.joining.end(), me))
    tell_grid_master(ctx.comm, bidmach::NodeNews::kJoined);
  const char* names[bidmach::kMaxDims] = {"row", "column", "dim2", "dim3"};
  std::unique_ptr<DimensionLoop> loops[bidmach::kMaxDims];
  std::unique_ptr<Activity> activities[bidmach::kMaxDims];
  if (!cfg.train) model.learner_done.store(true);
  for (int d = 0; d < dims; ++d) {
    const bidmach::Line line = grid->line(me, d);
    if (line.members.empty() && !dynamic) continue;  // alone in its line: nothing to average
    loops[d] = std::make_unique<DimensionLoop>(ctx, model, cfg, d, line);
    activities[d] = ctx.node.spawn(std::string("bidmach-") + names[d], [&loop = *loops[d]] { loop.run(); });
  }

  Vec grads = compute.make_vec();
  double lock_wait_s = 0;
  bool leaving = false;
  for (std::int64_t step = 0; cfg.train && step < ctx.steps; ++step) {
    if (ctx.comm.now_s() >= ctx.leave_at_s) {
      leaving = true;
      break;
    }
    float loss = 0;
    {
      const double asked = ctx.comm.now_s();
      const std::lock_guard<Mutex> hold(*model.lock);
      lock_wait_s += ctx.comm.now_s() - asked;
      loss = compute.forward_backward(model.params, grads);
      compute.optimizer_step(model.params, grads);
    }
    model.learner_steps.store(step + 1);
    ctx.recorder.step(step + 1, loss);
    if (step + 1 < ctx.steps && (ctx.recorder.eval_due(step + 1))) {
      const std::lock_guard<Mutex> hold(*model.lock);
      gossip_observe(ctx, step + 1, model.params);
      if (me == 0) ctx.recorder.evaluate(step + 1, model.params);
    }
  }
  model.learner_done.store(true);
  if (dynamic) {
    tell_grid_master(ctx.comm, leaving ? bidmach::NodeNews::kLeaving : bidmach::NodeNews::kDone);
  } else {
    for (auto& loop : loops) {
      if (loop != nullptr) loop->learner_done().wait_ok();
    }
  }
  for (auto& a : activities) {
    if (a != nullptr) a->join();
  }
  for (int d = 0; d < std::max(dims, 2); ++d)
    report(ctx, names[d], loops[d] != nullptr ? loops[d]->stats() : bidmach::DimStats{});
  ctx.recorder.count("learner_lock_wait_us", micros(lock_wait_s));
  gossip_observe(ctx, ctx.steps, model.params);
  if (!dynamic) {
    gossip_finish(ctx, model.params, std::nullopt, tags::kBidmachAverage);
    return;
  }
  if (!leaving) tell_grid_master(ctx.comm, bidmach::NodeNews::kStopped);
  const Group members(bidmach::final_members(ctx.comm));
  if (grid_master != nullptr) grid_master->join();
  if (!leaving) gossip_finish(ctx, model.params, std::nullopt, tags::kBidmachAverage, &members);
}

}  // namespace

AlgorithmSpec bidmach_grid_spec() {
  return {
      "bidmach_grid", "BIDMach: elastic averaging (beta = 0) over quorum allreduces of a 2-D grid's rows and columns",
      [](ConfigReader&, int workers) { return workers; },
      [](ConfigReader& r, int) -> RankMain {
        GridConfig cfg;
        cfg.alpha = static_cast<float>(r.number("elastic_alpha", 0.3, 0.0, 1.0));
        cfg.quorum.reduce = r.number("quorum_reduce", 1.0, 0.01, 1.0);
        cfg.quorum.complete = r.number("quorum_complete", 1.0, 0.01, 1.0);
        cfg.round_quorum = r.number("quorum_round", 1.0, 0.01, 1.0);
        cfg.quorum.chunk_floats = static_cast<std::size_t>(r.integer("chunk_floats", 20000, 1, 1'000'000'000));
        cfg.slots = static_cast<int>(r.integer("slots", 3, 1, 64));
        cfg.startup_poll_s = r.number("startup_poll_s", 2.0, 0.0, 3600.0);
        cfg.max_rounds = static_cast<std::uint32_t>(r.integer("max_rounds", 0, 0, 1'000'000));
        cfg.train = r.boolean("train", true);
        cfg.host_copy_Bps = r.number("host_copy_Bps", 0.0, 0.0, 1e12);
        const int dims = static_cast<int>(r.integer("dims", 2, 1, bidmach::kMaxDims));
        return [cfg, dims, start = std::make_shared<StartGrid>()](Context& ctx) { grid_rank(ctx, cfg, dims, *start); };
      },
      /*membership=*/true};
}

}  // namespace dts
