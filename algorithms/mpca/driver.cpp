// The MPCA driver (papers/mpca_sgd.md §4.8, DRIVER): holds the joint model x~, its smoothed change v and the
// extrapolated x* that it broadcasts, and runs driver cycles as pipeline.hpp schedules them. A cycle sends every
// worker its job, then runs the reduce (an activity) while it prepares the shard reduced in the cycle before
// (3-phase); the broadcast runs as an activity of its own, joined at the start of the next cycle. The cycle ends
// when the reduce and the preparation have (§13: the download goes on in the background). Once every worker has
// said it is done, S more cycles reduce every shard with the workers' final states, the last reduced shard is
// prepared, and x~ is the run's model. The driver's own model estimate for evaluations along the way: the sum of
// the reductions' tau over S K steps of one worker (real numerics only). A preparation costs what its passes
// over the shard cost on the driver's device, plus Spark's compression of the broadcast variable (§4.2: "several
// worker back-propagations" together), so the 2-phase pattern's cycle is longer than the 3-phase one's.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "algorithms/collectives/driver_collectives.hpp"
#include "algorithms/mpca/checkpoint.hpp"
#include "algorithms/mpca/mpca.hpp"
#include "algorithms/mpca/survivors.hpp"
#include "algorithms/mpca/update_rules.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::mpca {
namespace {

class Driver {
 public:
  Driver(Context& ctx, const Config& cfg)
      : ctx_(ctx),
        cfg_(cfg),
        n_(ctx.compute.num_params()),
        layout_(shard_layout(ctx.compute, cfg)),
        survivors_(ctx),
        checkpoints_(ctx, cfg.checkpoint, cfg.backup),
        book_(cfg.shards) {
    Compute& compute = ctx.compute;
    joint_ = compute.make_vec();
    old_ = compute.make_vec();
    v_ = compute.make_vec();  // zeros
    xstar_ = compute.make_vec();
    compute.init_params(joint_);
    rules::copy(xstar_, joint_);
    for (auto& r : reduced_) r = Vec(layout_.largest() + 1, compute.real());
    for (int s = 0; s < layout_.shards(); ++s) {
      if (layout_.ranges(s).size() > 1) outgoing_ = Vec(layout_.largest(), compute.real());
    }
  }

  void run() {
    Recorder& rec = ctx_.recorder;
    if (rec.eval_due(0)) rec.evaluate(0, joint_);
    int final_left = -1;
    std::int64_t c = 0;
    for (;; ++c) {
      survivors_.poll();
      if (survivors_.finished() == ctx_.workers && final_left < 0) final_left = cfg_.shards;  // every shard once more
      if (final_left == 0 || survivors_.live() == 0) break;
      if (final_left > 0) --final_left;
      const bool restarting = !restarted_ && ctx_.comm.now_s() >= ctx_.crash_at_s;
      if (restarting) c = restart(c);
      const double began_s = ctx_.comm.now_s();
      cycle(c);
      checkpoints_.after_cycle(c, joint_);
      if (final_left < 0 && !restarting && c >= cfg_.phases - 1) {  // past the pipeline's fill, all training
        training_cycle_s_ += ctx_.comm.now_s() - began_s;
        ++training_cycles_;
      }
    }
    send_jobs(Job{.stop = true});
    join_broadcast();
    if (pending_) prepare(*pending_, c);
    checkpoints_.finish();
    if (survivors_.lost() > 0) {
      ctx_.recorder.count("mpca_workers_lost", survivors_.lost());
      ctx_.recorder.count("mpca_reductions_lost", reductions_lost_);
    }
    ctx_.recorder.count("mpca_cycles", c + cycles_lost_);
    ctx_.recorder.count("mpca_phase_overlaps", book_.overlaps());
    ctx_.recorder.count("mpca_empty_reductions", empty_);
    ctx_.recorder.count("mpca_preparations", preparations_);
    ctx_.recorder.count("mpca_prepare_us", std::llround(prepare_s_ * 1e6));
    ctx_.recorder.count("mpca_training_cycles", training_cycles_);
    ctx_.recorder.count("mpca_training_cycle_us", std::llround(training_cycle_s_ * 1e6));
    rec.evaluate(ctx_.steps, joint_, /*final=*/true);
  }

 private:
  struct Reduced {
    int shard = -1;
    std::size_t buffer = 0;
  };

  void cycle(std::int64_t c) {
    const Cycle cy = cycle_of(cfg_.phases, cfg_.shards, c);
    const float alpha = static_cast<float>(cfg_.schedules.alpha_at(c));
    join_broadcast();
    const std::size_t buf = static_cast<std::size_t>(c % 2);
    if (cy.order == Cycle::Order::kInTurn) {  // reduce, prepare, broadcast, one after the other
      book_.begin(cy.reduce);
      send_jobs(Job{.reduce = cy.reduce, .alpha = alpha});
      const int lost = survivors_.lost();
      const double began_s = ctx_.comm.now_s();
      reduce(cy.reduce, buf);
      book_.end(cy.reduce);
      if (whole(lost, began_s, cy.reduce, c)) prepare(Reduced{cy.reduce, buf}, c);
      send_jobs(Job{.broadcast = cy.broadcast, .alpha = alpha});
      start_broadcast(cy.broadcast);
      join_broadcast();
      return;
    }
    if (cy.order == Cycle::Order::kPrepareFirst && pending_) prepare(*std::exchange(pending_, std::nullopt), c);
    book_.begin(cy.reduce);
    send_jobs(Job{.reduce = cy.reduce, .broadcast = cy.broadcast, .alpha = alpha});
    const int lost = survivors_.lost();
    const double began_s = ctx_.comm.now_s();
    if (cy.broadcast >= 0) start_broadcast(cy.broadcast);
    const std::unique_ptr<Activity> reducing =
        ctx_.node.spawn("mpca-reduce", [this, r = cy.reduce, buf] { reduce(r, buf); });
    if (pending_) prepare(*std::exchange(pending_, std::nullopt), c);  // 3-phase: at the same time
    reducing->join();
    book_.end(cy.reduce);
    if (whole(lost, began_s, cy.reduce, c)) pending_ = Reduced{cy.reduce, buf};
  }

  // The crash of the driver (a scenario failure of rank 0 with restart_after_s, at the first cycle boundary at
  // or after it; §4.9): what it held in memory is lost, the reduction of the last cycle with it, and a backup
  // being written. The collectives it had started end first (a deviation: a real crash would cut them off; the
  // workers drop what they brought on the restore). Back restart_after_s after the crash, the driver reads the
  // last backup (as long as writing it took; none: the initial model), takes up the cycle count where the backup
  // was taken (the schedules go back with it), and every worker restarts from it: a job says so, and the whole
  // model is broadcast (the workers replace their models and targets with it and reset their tau). Returns the
  // cycle to go on with.
  std::int64_t restart(std::int64_t c) {
    restarted_ = true;
    const double crash_s = ctx_.crash_at_s, boundary_s = ctx_.comm.now_s();
    join_broadcast();
    pending_.reset();
    checkpoints_.crash();
    const double back_s = crash_s + ctx_.restart_after_s;
    if (ctx_.comm.now_s() < back_s) ctx_.node.sleep_for(back_s - ctx_.comm.now_s());
    const Backup backup = *cfg_.backup;
    if (backup.valid) ctx_.node.sleep_for(cfg_.checkpoint.write_s(n_));  // read back at the rate it was written
    if (backup.valid && joint_.real()) {
      std::copy(backup.joint.begin(), backup.joint.end(), joint_.data().begin());
    } else if (!backup.valid) {
      ctx_.compute.init_params(joint_);
    }
    if (v_.real()) std::fill(v_.data().begin(), v_.data().end(), 0.0f);
    rules::copy(xstar_, joint_);
    const std::int64_t resume = backup.valid ? backup.cycle : 0;
    send_jobs(Job{.restore = true, .alpha = static_cast<float>(cfg_.schedules.alpha_at(resume))});
    ctx_.compute.charge_elementwise(n_, 2);  // the whole model's broadcast variable, as prepare() builds one
    if (const double zip_s = cfg_.spark.compress_s(n_); zip_s > 0) ctx_.node.sleep_for(zip_s);
    collectives::swarm_broadcast(ctx_.comm, survivors_.group(), xstar_, kDriver, tags::kMpcaBroadcast,
                                 cfg_.chunk_floats, cfg_.reserve, /*survive=*/true);
    cycles_lost_ += c - resume;
    const double now = ctx_.comm.now_s();
    ctx_.recorder.event("driver_restart", {{"crash_s", crash_s},
                                           {"noticed_s", boundary_s},
                                           {"backup_cycle", static_cast<double>(resume)},
                                           {"backup_taken_s", backup.valid ? backup.taken_s : 0.0},
                                           {"cycles_lost", static_cast<double>(c - resume)},
                                           {"down_s", now - crash_s},
                                           {"time_lost_s", now - (backup.valid ? backup.taken_s : 0.0)}});
    ctx_.recorder.count("mpca_driver_restarts", 1);
    return resume;
  }

  // Whether the reduction begun when `lost` workers had been lost has every live worker's share: a worker lost
  // since may have taken its subtree's partial sums with it (the others' steps are lost with them, as their tau
  // was reset), and the shard waits for its next turn.
  bool whole(int lost, double began_s, int shard, std::int64_t c) {
    survivors_.poll();
    if (survivors_.lost() == lost) return true;
    ++reductions_lost_;
    ctx_.recorder.event("reduction_lost", {{"shard", static_cast<double>(shard)},
                                           {"cycle", static_cast<double>(c)},
                                           {"time_lost_s", ctx_.comm.now_s() - began_s}});
    return false;
  }

  // A job to every live worker; after a loss, the first job says so and the new membership follows it (the
  // workers drop the download of a broadcast that ran over the old group: a lost member may have left chunks
  // out of it). A worker lost meanwhile takes no job (`peer failed`), which the next poll tells.
  void send_jobs(const Job& j) {
    if (!j.stop && cfg_.spark.job_launch_s > 0) ctx_.node.sleep_for(cfg_.spark.job_launch_s);
    survivors_.poll();
    const bool regroup = !j.stop && survivors_.rebuild();
    Vec msg(Job::kFloats, true);
    msg.data()[0] = j.stop ? Job::kStop : j.restore ? Job::kRestore : 0.0f;
    if (regroup) msg.data()[0] += Job::kRegroup;
    msg.data()[1] = static_cast<float>(j.reduce);
    msg.data()[2] = static_cast<float>(j.broadcast);
    msg.data()[3] = j.alpha;
    const Vec members = survivors_.members_message();
    std::vector<Request> sent;
    for (Rank w = 1; w <= ctx_.workers; ++w) {
      if (!survivors_.alive(w)) continue;
      sent.push_back(ctx_.comm.isend(w, tags::kMpcaJob, msg));
      if (regroup) sent.push_back(ctx_.comm.isend(w, tags::kMpcaJob, members));
    }
    for (auto& s : sent) {
      if (const Status st = s.wait(); st != Status::kPeerFailed) require_ok(st, s.peer(), "mpca driver");
    }
  }

  void reduce(int shard, std::size_t buf) {
    const std::size_t cnt = layout_.size(shard);
    collectives::weighted_tree_reduce(ctx_.comm, ctx_.compute, survivors_.group(), reduced_[buf].sub(0, cnt + 1),
                                      kDriver, tags::kMpcaReduce, cfg_.weighted, /*survive=*/true);
  }

  // Eq. 9, 8, 4 and 5 on one shard, then the broadcast variable: x* serialised (one copy into its buffer; a shard
  // of several ranges is gathered by that copy) and compressed; chunking and registering it are prepare_s. The
  // passes are the fewest that the equations need: Eq. 9 divides in place (2 streams), Eq. 8 keeps the old x~
  // and blends (2 + 3), Eq. 4 (4) and Eq. 5 (3).
  void prepare(const Reduced& r, std::int64_t c) {
    const double began_s = ctx_.comm.now_s();
    book_.begin(r.shard);
    if (cfg_.spark.prepare_s > 0) ctx_.node.sleep_for(cfg_.spark.prepare_s);
    const std::size_t cnt = layout_.size(r.shard);
    Vec& red = reduced_[r.buffer];
    Compute& compute = ctx_.compute;
    const bool real = red.real();
    const float total = real ? red.data()[cnt] : 0.0f;
    const float divisor = cfg_.weighted ? total : static_cast<float>(survivors_.live());
    if (real && cfg_.weighted && total == 0) {
      ++empty_;  // no worker stepped since the shard's last reduction: no information
    } else {
      if (real) {
        for (std::size_t i = 0; i < cnt; ++i) red.data()[i] /= divisor;
      }
      const auto beta = static_cast<float>(cfg_.schedules.beta_at(c));
      const auto delta = static_cast<float>(cfg_.delta), gamma = static_cast<float>(cfg_.schedules.gamma_at(c));
      layout_.for_each(r.shard, [&](std::size_t off, std::size_t count, std::size_t packed) {
        driver_update(joint_.sub(off, count), old_.sub(off, count), red.sub(packed, count), beta);
        extrapolate(xstar_.sub(off, count), v_.sub(off, count), joint_.sub(off, count), old_.sub(off, count), delta,
                    gamma);
      });
      compute.charge_elementwise(cnt, 2);  // the division
      compute.charge_elementwise(cnt, 5);  // Eq. 8
      compute.charge_elementwise(cnt, 7);  // Eq. 4-5
    }
    compute.charge_elementwise(cnt, 2);  // serialised
    if (const double zip_s = cfg_.spark.compress_s(cnt); zip_s > 0) ctx_.node.sleep_for(zip_s);
    book_.end(r.shard);
    if (real) steps_seen_ += static_cast<double>(total);
    prepare_s_ += ctx_.comm.now_s() - began_s;
    ++preparations_;
    evaluate_along();
  }

  void start_broadcast(int shard) {
    book_.begin(shard);
    broadcasting_ = shard;
    const auto& ranges = layout_.ranges(shard);
    Slice from = xstar_.sub(ranges[0].first, ranges[0].second);
    if (ranges.size() > 1) {  // packed into one message: the serialising copy, charged by prepare()
      from = outgoing_.sub(0, layout_.size(shard));
      layout_.gather(xstar_, shard, from);
    }
    broadcast_ = ctx_.node.spawn("mpca-broadcast", [this, from, group = survivors_.group()] {
      collectives::swarm_broadcast(ctx_.comm, group, from, kDriver, tags::kMpcaBroadcast, cfg_.chunk_floats,
                                   cfg_.reserve, /*survive=*/true);
    });
  }

  void join_broadcast() {
    if (!broadcast_) return;
    broadcast_->join();
    broadcast_.reset();
    book_.end(broadcasting_);
  }

  // Evaluates x~ once, at the latest step the recorder wants that the workers' reported steps have reached since
  // the last call (the last step is the final evaluation's).
  void evaluate_along() {
    const double per_step = static_cast<double>(cfg_.shards) * ctx_.workers;
    const std::int64_t now = std::min(ctx_.steps, static_cast<std::int64_t>(steps_seen_ / per_step));
    for (std::int64_t s = std::min(now, ctx_.steps - 1); s > evaluated_; --s) {
      if (ctx_.recorder.eval_due(s)) {
        ctx_.recorder.evaluate(s, joint_);
        break;
      }
    }
    evaluated_ = std::max(evaluated_, now);
  }

  Context& ctx_;
  const Config& cfg_;
  std::size_t n_;
  ShardLayout layout_;
  Survivors survivors_;
  Checkpointer checkpoints_;
  PhaseBook book_;
  Vec joint_, old_, v_, xstar_;
  Vec outgoing_{0, true};  // a shard of several ranges, packed for its broadcast
  std::array<Vec, 2> reduced_;
  std::optional<Reduced> pending_;
  std::unique_ptr<Activity> broadcast_;
  int broadcasting_ = -1;
  std::int64_t empty_ = 0, evaluated_ = 0, reductions_lost_ = 0, cycles_lost_ = 0;
  bool restarted_ = false;
  double steps_seen_ = 0;
  // Preparations and their time; the cycles past the pipeline's fill begun while every worker trained, and theirs.
  std::int64_t preparations_ = 0, training_cycles_ = 0;
  double prepare_s_ = 0, training_cycle_s_ = 0;
};

}  // namespace

void driver(Context& ctx, const Config& cfg) { Driver(ctx, cfg).run(); }

}  // namespace dts::mpca
