// Synchronous data-parallel SGD with an allreduce of the gradients (the baseline of every paper in
// papers/): each step, every worker computes a minibatch gradient, the gradients are summed by a ring,
// binomial-tree or hypercube allreduce built from point-to-point messages, divided by P, and every worker applies the
// same optimizer step, so all replicas stay identical. With P workers of batch b this is one worker with
// batch P*b (up to the order of the sum).
#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

struct AllreduceSgdConfig {
  collectives::AllreduceAlgo allreduce = collectives::AllreduceAlgo::kRing;
};

void allreduce_sgd_rank(Context& ctx, const AllreduceSgdConfig& cfg) {
  Compute& compute = ctx.compute;
  const Group everyone = Group::range(0, ctx.comm.size());
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);  // same seed, same model on every rank
  const float inv_p = 1.0f / static_cast<float>(everyone.size());
  if (ctx.comm.rank() == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const float loss = compute.forward_backward(params, grads);         // 1. local gradient
    collectives::allreduce(cfg.allreduce, ctx.comm, compute, everyone,  // 2. sum over workers
                           grads, tags::kCollective);
    rules::scale(grads, inv_p);  // 3. average
    compute.charge_elementwise(grads.count(), 2);
    compute.optimizer_step(params, grads);  // 4. identical update everywhere
    ctx.recorder.step(step + 1, loss);
    const bool last = step + 1 == ctx.steps;
    if (ctx.comm.rank() == 0 && (last || ctx.recorder.eval_due(step + 1))) {
      ctx.recorder.evaluate(step + 1, params, last);  // replicas are identical: rank 0 speaks for all
    }
  }
}

}  // namespace

AlgorithmSpec allreduce_sgd_spec() {
  return {"allreduce_sgd",
          "synchronous SGD, gradients summed by a ring, tree or hypercube allreduce (or auto: by size, as Open MPI)",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            AllreduceSgdConfig cfg;
            cfg.allreduce = collectives::parse_allreduce_algo(
                r.choice("allreduce", "ring", {"ring", "tree", "hypercube", "auto"}), r.where("allreduce"));
            return [cfg](Context& ctx) { allreduce_sgd_rank(ctx, cfg); };
          }};
}

}  // namespace dts
