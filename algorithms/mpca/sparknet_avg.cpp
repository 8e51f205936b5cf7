// SparkNet-style bulk-synchronous model averaging (papers/mpca_sgd.md §5.1), MPCA's synchronous baseline: a
// driver on rank 0 and K workers on ranks 1..K, as `mpca`. Each round the driver broadcasts x~ (the chunked swarm
// broadcast, the driver the first source), every worker replaces its model with it (the optimizer's state kept,
// §13), runs tau steps of the experiment's optimizer alone, and the workers' models come back up the binary tree
// to the driver, which takes their mean (beta = 1: x~ is replaced). No overlap: the workers wait for the
// broadcast and the reduce. Rounds: ceil(steps / tau), the last one shorter. The Spark overheads of
// spark_overheads.hpp apply as in `mpca` (the round's job launch before its broadcast, which the driver builds as
// mpca's driver builds its shards': one serialising copy, then the compression).
#include <algorithm>
#include <string>

#include "algorithms/collectives/driver_collectives.hpp"
#include "algorithms/mpca/mpca.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

struct SparknetConfig {
  std::int64_t tau = 58;
  std::size_t chunk_floats = 1u << 20;
  bool reserve = true;
  mpca::SparkOverheads spark;
};

void sparknet_driver(Context& ctx, const SparknetConfig& cfg) {
  Compute& compute = ctx.compute;
  const std::size_t n = compute.num_params();
  const Group everyone = Group::range(0, ctx.workers + 1);
  Vec joint = compute.make_vec(), sum(n + 1, compute.real());
  compute.init_params(joint);
  if (ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, joint);
  for (std::int64_t done = 0; done < ctx.steps;) {
    if (cfg.spark.job_launch_s > 0) ctx.node.sleep_for(cfg.spark.job_launch_s);  // 1. the round's job
    compute.charge_elementwise(n, 2);  // x~ as a broadcast variable: serialised, compressed
    if (cfg.spark.compress_s(n) > 0) ctx.node.sleep_for(cfg.spark.compress_s(n));
    collectives::swarm_broadcast(ctx.comm, everyone, joint, mpca::kDriver, tags::kSparknetBroadcast, cfg.chunk_floats,
                                 cfg.reserve);
    const std::int64_t before = done;
    done = std::min(ctx.steps, done + cfg.tau);  // 2. the workers' tau steps
    collectives::weighted_tree_reduce(ctx.comm, compute, everyone, sum, mpca::kDriver, tags::kSparknetReduce,
                                      /*weighted=*/false);
    if (sum.real()) {  // 3. x~ = the workers' mean
      for (std::size_t i = 0; i < n; ++i) joint.data()[i] = sum.data()[i] / static_cast<float>(ctx.workers);
    }
    compute.charge_elementwise(n, 2);
    for (std::int64_t s = before + 1; s < done; ++s) {  // the last step is the final evaluation's
      if (ctx.recorder.eval_due(s)) {
        ctx.recorder.evaluate(s, joint);
        break;
      }
    }
  }
  ctx.recorder.evaluate(ctx.steps, joint, /*final=*/true);
}

void sparknet_worker(Context& ctx, const SparknetConfig& cfg) {
  Compute& compute = ctx.compute;
  const std::size_t n = compute.num_params();
  const Group everyone = Group::range(0, ctx.workers + 1);
  Vec x = compute.make_vec(), grad = compute.make_vec(), up(n + 1, compute.real());
  compute.init_params(x);
  for (std::int64_t step = 0; step < ctx.steps;) {
    collectives::swarm_broadcast(ctx.comm, everyone, x, mpca::kDriver, tags::kSparknetBroadcast, cfg.chunk_floats,
                                 cfg.reserve);  // 1. x <- x~, the optimizer's state kept
    if (cfg.spark.collective_s(n) > 0) ctx.node.sleep_for(cfg.spark.collective_s(n));
    for (const std::int64_t end = std::min(ctx.steps, step + cfg.tau); step < end; ++step) {  // 2. tau steps
      const float loss = compute.forward_backward(x, grad);
      compute.optimizer_step(x, grad);
      ctx.recorder.step(step + 1, loss);
    }
    if (cfg.spark.collective_s(n) > 0) ctx.node.sleep_for(cfg.spark.collective_s(n));
    rules::copy(up.sub(0, n), x);  // 3. up the tree, weight 1
    if (up.real()) up.data()[n] = 1.0f;
    collectives::weighted_tree_reduce(ctx.comm, compute, everyone, up, mpca::kDriver, tags::kSparknetReduce,
                                      /*weighted=*/false);
  }
}

}  // namespace

AlgorithmSpec sparknet_avg_spec() {
  return {"sparknet_avg", "SparkNet-style averaging: the driver on rank 0 broadcasts, workers run tau steps, tree mean",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int) -> RankMain {
            SparknetConfig cfg;
            cfg.tau = r.integer("comm_period_steps", 58, 1, 1'000'000);
            cfg.chunk_floats = static_cast<std::size_t>(r.integer("chunk_floats", 1 << 20, 1, 1'000'000'000));
            cfg.reserve = r.boolean("reserve_chunks", true);
            cfg.spark = mpca::read_spark_overheads(r, /*prepare=*/false);
            return [cfg](Context& ctx) {
              if (ctx.comm.rank() == mpca::kDriver) {
                sparknet_driver(ctx, cfg);
              } else {
                sparknet_worker(ctx, cfg);
              }
            };
          }};
}

}  // namespace dts
