// The no-communication baseline of the Elastic Gossip thesis (papers/elastic_gossip.md §5): every worker
// trains its own model on its shard; nothing is exchanged. `barrier` true adds the thesis's barrier at every
// step (a tree allreduce of one float). The final model is the workers' average, as for the gossip family,
// and rank 0's own model is evaluated beside it.
#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/gossip_family.hpp"

namespace dts {

AlgorithmSpec no_comm_spec() {
  return {"no_comm", "no communication: independent local training, averaged at the end",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            const bool barrier = r.boolean("barrier", false);
            return [barrier](Context& ctx) {
              Compute& compute = ctx.compute;
              const Rank me = ctx.comm.rank();
              Vec params = compute.make_vec(), grads = compute.make_vec(), one(1, true);
              compute.init_params(params);
              if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);
              for (std::int64_t step = 0; step < ctx.steps; ++step) {
                const float loss = compute.forward_backward(params, grads);
                if (barrier) {
                  collectives::tree_allreduce(ctx.comm, compute, Group::range(0, ctx.comm.size()), one,
                                              tags::kGossipBarrier);
                }
                compute.optimizer_step(params, grads);
                ctx.recorder.step(step + 1, loss);
                gossip_observe(ctx, step + 1, params);
                if (me == 0 && step + 1 < ctx.steps && ctx.recorder.eval_due(step + 1)) {
                  ctx.recorder.evaluate(step + 1, params);
                }
              }
              gossip_finish(ctx, params);
            };
          }};
}

}  // namespace dts
