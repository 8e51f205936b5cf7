// Synchronous data-parallel SGD with a master (papers/easgd_hpc.md §4.1): every step, each worker computes
// a minibatch gradient, a binomial-tree reduce sums the gradients to the master, the master applies
//   W <- W - eta * sum_i dW_i            (the experiment's optimizer; momentum keeps V on the master)
// and a binomial-tree broadcast returns W to every worker: 2 ceil(log2 n) tree rounds for n tree members.
// Note the sum: eta acts as P times the learning rate of allreduce_sgd, which averages; "average_gradients"
// divides by P instead. Rank 0 is the host CPU, ranks 1..P the workers; the master is the CPU ("master":
// "host", trees over ranks 0..P, the CPU adds zeros) or worker rank 1 ("worker", trees over ranks 1..P).
// Deterministic: the sum runs in a fixed order, so timing never changes a result.
#include "algorithms/algorithm.hpp"
#include "algorithms/param_exchange.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Tag kTagReduce = tags::kSyncSgdReduce;        // sum_i dW_i, everyone -> master
constexpr Tag kTagBroadcast = tags::kSyncSgdBroadcast;  // W, master -> everyone

struct SyncSgdConfig {
  bool master_on_host = true;
  bool average = false;
  bool packed = true;
};

void sync_sgd_rank(Context& ctx, const SyncSgdConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  const Rank me = ctx.comm.rank(), master = cfg.master_on_host ? 0 : 1;
  if (me == 0 && master != 0) return;  // the CPU holds no parameters
  const Group tree = cfg.master_on_host ? Group::range(0, ctx.workers + 1) : Group::range(1, ctx.workers);
  const bool is_master = me == master, is_worker = me >= 1;
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);  // same seed, same W everywhere
  if (is_master && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    float loss = 0;
    if (is_worker) {
      loss = compute.forward_backward(params, grads);  // 1. local gradient
    } else {
      rules::scale(grads, 0.0f);  //    (the CPU adds nothing)
    }
    ex.tree_reduce(ctx.comm, compute, tree, grads, 0, kTagReduce);  // 2. sum_i dW_i to the master
    if (is_master) {
      if (cfg.average) {
        rules::scale(grads, 1.0f / static_cast<float>(ctx.workers));
        compute.charge_elementwise(grads.count(), 2);
      }
      compute.optimizer_step(params, grads);  // 3. W <- W - eta sum_i dW_i
    }
    ex.tree_broadcast(ctx.comm, tree, params, 0, kTagBroadcast);  // 4. W to every worker
    if (is_worker) ctx.recorder.step(step + 1, loss);
    const bool last = step + 1 == ctx.steps;
    if (is_master && (last || ctx.recorder.eval_due(step + 1))) ctx.recorder.evaluate(step + 1, params, last);
  }
}

}  // namespace

AlgorithmSpec sync_sgd_spec() {
  return {"sync_sgd", "synchronous SGD with a master: tree reduce of the gradient sum, update, tree broadcast",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            SyncSgdConfig cfg;
            cfg.master_on_host = r.choice("master", "host", {"host", "worker"}) == "host";
            cfg.average = r.boolean("average_gradients", false);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) { sync_sgd_rank(ctx, cfg); };
          }};
}

}  // namespace dts
