// An MPCA worker (papers/mpca_sgd.md §4.8, AGENT LOOP and MAP_TASK): the rank's main activity trains without
// pause; an agent activity serves the driver's jobs. Under the model lock, held by a training step from the
// displacement to the optimizer's update, the agent hands the optimizer the shard downloaded during the last
// cycle as its new target (host -> device), snapshots the shard to reduce with its step count tau since that
// shard's last reduction (device -> host) and resets tau; then it starts the download of the job's broadcast (an
// activity of its own, joined at the next job) and takes part in the reduction.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/collectives/driver_collectives.hpp"
#include "algorithms/mpca/mpca.hpp"
#include "algorithms/mpca/survivors.hpp"
#include "algorithms/mpca/update_rules.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::mpca {
namespace {

struct WorkerState {
  Vec x, target;
  std::vector<char> has_target;
  std::vector<std::int64_t> tau;  // steps since each shard's last reduction
  float alpha = 0;
  std::unique_ptr<Mutex> lock;
};

// The driver restarted (driver.cpp, restart): the model it restarted from, broadcast whole, replaces this
// worker's model and every target; the steps since each shard's last reduction start again.
void restore(Context& ctx, const Config& cfg, const Group& everyone, WorkerState& w, float alpha) {
  Compute& compute = ctx.compute;
  const std::size_t n = compute.num_params();
  Vec model = compute.make_vec();
  collectives::swarm_broadcast(ctx.comm, everyone, model, kDriver, tags::kMpcaBroadcast, cfg.chunk_floats, cfg.reserve,
                               /*survive=*/true);
  const std::lock_guard<Mutex> hold(*w.lock);
  rules::copy(w.x, model);
  rules::copy(w.target, model);
  compute.charge_elementwise(n, 2);
  compute.charge_elementwise(n, 2);
  std::fill(w.has_target.begin(), w.has_target.end(), 1);
  std::fill(w.tau.begin(), w.tau.end(), 0);
  w.alpha = alpha;
  ctx.recorder.count("mpca_restores", 1);
}

// Workers were lost (§4.9): this worker takes over its part of their data, its place among the survivors in
// rank order naming the part (Compute::take_over_shards). Returns the samples it now holds beyond its own.
std::size_t take_over(Context& ctx, const Vec& members, WorkerState& w) {
  std::vector<int> lost;
  int part = 0, parts = 0;
  for (Rank r = 1; static_cast<std::size_t>(r) < members.count(); ++r) {
    if (members.data()[r] == 0) {
      lost.push_back(r);
      continue;
    }
    if (r == ctx.comm.rank()) part = parts;
    ++parts;
  }
  const std::lock_guard<Mutex> hold(*w.lock);  // the training step reads the shard
  return ctx.compute.take_over_shards(lost, part, parts);
}

void agent(Context& ctx, const Config& cfg, const ShardLayout& layout, WorkerState& w) {
  Compute& compute = ctx.compute;
  const std::size_t largest = layout.largest();
  Group everyone = Group::range(0, ctx.workers + 1);  // rebuilt over the survivors when the driver says so
  Vec job(Job::kFloats, true), download(largest, compute.real()), reduce(largest + 1, compute.real());
  std::unique_ptr<Activity> downloading;
  int downloaded = -1;  // the shard in `download`
  std::int64_t targets = 0, discarded = 0;
  std::size_t taken_over = 0;
  for (;;) {
    ctx.comm.recv(kDriver, tags::kMpcaJob, job);
    const bool regroup = job.data()[0] >= Job::kRegroup;
    const float kind = job.data()[0] - (regroup ? Job::kRegroup : 0.0f);
    const Job j{.stop = kind == Job::kStop,
                .restore = kind == Job::kRestore,
                .reduce = static_cast<int>(job.data()[1]),
                .broadcast = static_cast<int>(job.data()[2]),
                .alpha = job.data()[3]};
    if (downloading) downloading->join();  // the broadcast of the last cycle
    downloading.reset();
    if (regroup) {  // workers were lost: the survivors' group, and the download is void
      Vec members(static_cast<std::size_t>(ctx.workers) + 1, true);
      ctx.comm.recv(kDriver, tags::kMpcaJob, members);
      everyone = group_of(members);
      taken_over = take_over(ctx, members, w);
      if (downloaded >= 0) ++discarded;
      downloaded = -1;
    }
    if (j.restore) {  // the driver restarted: everyone from its backup
      if (downloaded >= 0) ++discarded;
      downloaded = -1;
      restore(ctx, cfg, everyone, w, j.alpha);
      continue;
    }
    std::size_t rcount = 0;
    {
      const std::lock_guard<Mutex> hold(*w.lock);  // at the next step boundary
      if (downloaded >= 0) {                       // 1. the new target
        const std::size_t cnt = layout.size(downloaded);
        layout.scatter(download.sub(0, cnt), downloaded, w.target);
        compute.charge_elementwise(cnt, 2);
        w.has_target[static_cast<std::size_t>(downloaded)] = 1;
        downloaded = -1;
        ++targets;
      }
      w.alpha = j.alpha;
      if (!j.stop && j.reduce >= 0) {  // 2. the snapshot of the shard to reduce, and its tau
        const std::size_t cnt = layout.size(j.reduce);
        rcount = cnt;
        layout.gather(w.x, j.reduce, reduce.sub(0, cnt));
        if (reduce.real()) reduce.data()[cnt] = static_cast<float>(w.tau[static_cast<std::size_t>(j.reduce)]);
        w.tau[static_cast<std::size_t>(j.reduce)] = 0;
        compute.charge_elementwise(cnt, 2);
      }
    }
    if (j.stop) break;
    if (j.broadcast >= 0) {  // 3. the download, in the background
      downloaded = j.broadcast;
      const Slice into = download.sub(0, layout.size(j.broadcast));
      downloading = ctx.node.spawn("mpca-download-" + std::to_string(ctx.comm.rank()), [&ctx, &cfg, everyone, into] {
        collectives::swarm_broadcast(ctx.comm, everyone, into, kDriver, tags::kMpcaBroadcast, cfg.chunk_floats,
                                     cfg.reserve, /*survive=*/true);
        const double unpack_s = cfg.spark.collective_s(into.count);  // deserialise, copy toward the device
        if (unpack_s > 0) ctx.node.sleep_for(unpack_s);
      });
    }
    if (j.reduce >= 0) {                                     // 4. my part of the tree reduce
      const double pack_s = cfg.spark.collective_s(rcount);  // serialise my contribution
      if (pack_s > 0) ctx.node.sleep_for(pack_s);
      collectives::weighted_tree_reduce(ctx.comm, compute, everyone, reduce.sub(0, rcount + 1), kDriver,
                                        tags::kMpcaReduce, cfg.weighted, /*survive=*/true);
    }
  }
  ctx.recorder.count("mpca_targets_set", targets);
  if (discarded > 0) ctx.recorder.count("mpca_downloads_discarded", discarded);
  if (taken_over > 0) ctx.recorder.count("mpca_samples_taken_over", static_cast<std::int64_t>(taken_over));
}

}  // namespace

void worker(Context& ctx, const Config& cfg) {
  Compute& compute = ctx.compute;
  const ShardLayout layout = shard_layout(compute, cfg);
  const auto S = static_cast<std::size_t>(cfg.shards);
  WorkerState w{compute.make_vec(),   compute.make_vec(), std::vector<char>(S, 0), std::vector<std::int64_t>(S, 0), 0,
                ctx.node.make_mutex()};
  Vec grad = compute.make_vec();
  compute.init_params(w.x);
  const std::unique_ptr<Activity> serving =
      ctx.node.spawn("mpca-agent-" + std::to_string(ctx.comm.rank()), [&] { agent(ctx, cfg, layout, w); });
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    float loss = 0;
    {
      const std::lock_guard<Mutex> hold(*w.lock);
      const auto pull = [&](bool gradient) {  // every shard with a target, Eq. 7 or Eq. 6
        if (w.alpha == 0) return;
        for (int s = 0; s < cfg.shards; ++s) {
          if (!w.has_target[static_cast<std::size_t>(s)]) continue;
          layout.for_each(s, [&](std::size_t off, std::size_t cnt, std::size_t) {
            if (gradient) {
              add_penalty_gradient(grad.sub(off, cnt), w.x.sub(off, cnt), w.target.sub(off, cnt), w.alpha);
            } else {
              displace(w.x.sub(off, cnt), w.target.sub(off, cnt), w.alpha);
            }
          });
          compute.charge_elementwise(layout.size(s), 3);
        }
      };
      if (cfg.displace) pull(false);  // 1. displace, then the gradient at the displaced point
      loss = compute.forward_backward(w.x, grad);
      if (!cfg.displace) pull(true);
      compute.optimizer_step(w.x, grad);  // 2. the experiment's optimizer (the paper's: Adam)
      for (auto& t : w.tau) ++t;
    }
    ctx.recorder.step(step + 1, loss);
  }
  ctx.comm.send(kDriver, tags::kMpcaDone, Vec(0, true));
  serving->join();
}

}  // namespace dts::mpca
