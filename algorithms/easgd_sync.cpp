// Synchronous EASGD (You, Buluc & Demmel, SC17, Algorithms 2-3; papers/easgd_hpc.md §5.4-5.6). Rank 0 is
// the host CPU, ranks 1..P the workers (GPUs). Every tau steps the master broadcasts the center W~_t down a
// binomial tree and a binomial-tree reduce delivers sum_i W^i_t to it; then
//   worker  W^i <- W^i - eta dW^i - alpha (W^i_t - W~_t)                  (eq. 1)
//   master  W~  <- W~ + alpha sum_i (W^i_t - W~_t) = (1 - P alpha) W~ + alpha sum_i W^i_t   (eq. 2)
// with alpha = eta * rho (default 0.9 / P, so that P alpha = 0.9). Variants ("variant" key):
//   1  the master is the CPU on rank 0, outside the workers: trees over ranks 0..P, the CPU adds zeros;
//   2  the master is worker rank 1 (GPU1): trees over ranks 1..P, rank 0 idles;
//   3  as 2, with broadcast + reduce run by a spawned activity while the F/B runs, since both W^i_t and
//      W~_t are known before it: t_iter ~ max(t_FB, t_bcast + t_reduce) + t_update.
// In variant 1 the CPU has no F/B, so its broadcast starts at once and the first hop overlaps the workers'
// F/B; whether its traffic crosses PCIe is the platform's placement of rank 0, not this file's business.
// Every sum runs in a fixed order, so a run does not depend on timing: same seed, same bits; variants 2
// and 3 compute exactly the same numbers. Updates (1) and (2) are independent; they run one after the other.
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/elastic_update.hpp"
#include "algorithms/param_exchange.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Tag kTagBroadcast = tags::kEasgdSyncBroadcast;  // W~_t, master -> everyone
constexpr Tag kTagReduce = tags::kEasgdSyncReduce;        // sum_i W^i_t, everyone -> master

struct EasgdSyncConfig {
  int variant = 3;
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
  bool packed = true;
};

void easgd_sync_rank(Context& ctx, const EasgdSyncConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  const int P = ctx.workers;
  const Rank me = ctx.comm.rank(), master = cfg.variant == 1 ? 0 : 1;
  if (me == 0 && master != 0) return;  // variants 2-3: the CPU holds no parameters
  const Group tree = cfg.variant == 1 ? Group::range(0, P + 1) : Group::range(1, P);  // root: index 0
  const bool is_master = me == master, is_worker = me >= 1;
  const auto alpha = static_cast<float>(cfg.elastic_alpha);
  Vec x = compute.make_vec(), grad = compute.make_vec(), center = compute.make_vec(), sum = compute.make_vec();
  Vec diff = compute.make_vec();
  compute.init_params(x);  // same seed, same W^i_1 = W~_1 everywhere
  compute.init_params(center);
  if (is_master && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, center);

  // Broadcast W~_t into `center`; reduce sum_i W^i_t into the master's `sum` (the CPU contributes zeros).
  // The tree reduce works in place, so it gets a copy of W^i_t: the out-of-place reduce of MPI or NCCL,
  // not charged.
  auto exchange_center = [&] {
    ex.tree_broadcast(ctx.comm, tree, center, 0, kTagBroadcast);
    if (is_worker) {
      rules::copy(sum, x);
    } else {
      rules::scale(sum, 0.0f);
    }
    ex.tree_reduce(ctx.comm, compute, tree, sum, 0, kTagReduce);
  };
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const bool exchange = step % cfg.comm_period_steps == 0;
    float loss = 0;
    if (exchange && cfg.variant == 3) {
      auto exchanging = ctx.node.spawn("easgd-sync-exchange", exchange_center);  // 1-3. bcast + reduce
      loss = compute.forward_backward(x, grad);                                  //      while F/B runs
      exchanging->join();
    } else {
      if (is_worker) loss = compute.forward_backward(x, grad);  // 1. F/B on every worker
      if (exchange) exchange_center();                          // 2. broadcast W~_t  3. reduce sum W^i_t
    }
    if (is_worker) {  // 4. workers update by (1), with alpha (W^i_t - W~_t)
      elastic_worker_update(compute, x, grad, center, diff, alpha, exchange);
      ctx.recorder.step(step + 1, loss);
    }
    if (is_master && exchange) {  // 5. master updates by (2)
      rules::scale(center, 1.0f - static_cast<float>(P) * alpha);
      rules::axpy(center, alpha, sum);
      compute.charge_elementwise(center.count(), 3);
    }
    const bool last = step + 1 == ctx.steps;
    if (is_master && (last || ctx.recorder.eval_due(step + 1))) ctx.recorder.evaluate(step + 1, center, last);
  }
}

}  // namespace

AlgorithmSpec easgd_sync_spec() {
  return {"easgd_sync",
          "synchronous EASGD: tree broadcast of the center and tree reduce of the workers' weights; variant 1 "
          "(CPU master), 2 (GPU1 master), 3 (2 overlapped with F/B)",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdSyncConfig cfg;
            cfg.variant = static_cast<int>(r.integer("variant", 3, 1, 3));
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0 / workers);
            cfg.comm_period_steps = r.integer("comm_period_steps", 1, 1, 1'000'000);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) { easgd_sync_rank(ctx, cfg); };
          }};
}

}  // namespace dts
