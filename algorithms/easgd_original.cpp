// Original EASGD, round-robin (Zhang et al. 2015 as run by You, Buluc & Demmel, SC17, Algorithm 1;
// papers/easgd_hpc.md §4.5). Rank 0 is the master (the CPU) holding the center W~; ranks 1..P are the
// workers (GPUs). The master talks to one worker at a time, in rank order: it sends W~ to worker j, waits
// for W^j, and moves W~ toward it; only then is worker j+1 served. Every tau local steps:
//   worker  W^j <- W^j - eta dW^j - alpha (W^j - W~)          (eq. 1)
//   master  W~  <- W~ + alpha (W^j - W~)                      (single-worker form of eq. 2)
// Two timings of the same arithmetic ("overlap" key):
//   Original EASGD  (overlap, default): a worker computes its F/B while the master serves the others and
//                   exchanges when its turn comes; only the exchanges are serialized (2c each).
//   Original EASGD* (no overlap): a worker waits for its turn before its F/B, so the master waits for
//                   every F/B: one worker computes at a time, 2c + t_FB per exchange.
#include "algorithms/algorithm.hpp"
#include "algorithms/elastic_update.hpp"
#include "algorithms/param_exchange.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kMaster = 0;
constexpr Tag kTagCenter = tags::kEasgdOriginalCenter;    // master -> worker j: W~ (worker j's turn)
constexpr Tag kTagWeights = tags::kEasgdOriginalWeights;  // worker j -> master: W^j

struct EasgdOriginalConfig {
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
  bool overlap = true;
  bool packed = true;
};

void original_worker(Context& ctx, const EasgdOriginalConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  const auto alpha = static_cast<float>(cfg.elastic_alpha);
  Vec x = compute.make_vec(), grad = compute.make_vec(), center = compute.make_vec(), diff = compute.make_vec();
  compute.init_params(x);
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const bool exchange = step % cfg.comm_period_steps == 0;
    Transfer center_rx;
    if (exchange) center_rx = ex.irecv(ctx.comm, kMaster, kTagCenter, center);  // 1. my turn: W~ arrives
    if (!cfg.overlap) center_rx.wait_ok();                 //    (Original*: F/B waits for the turn)
    const float loss = compute.forward_backward(x, grad);  // 2. F/B on worker j at W^j
    if (exchange) {
      center_rx.wait_ok();
      ex.send(ctx.comm, kMaster, kTagWeights, x);  // 3. the master receives W^j
    }
    // 4. alpha (W^j - W~) from the pre-update values, 5. worker j updates by (1)
    elastic_worker_update(compute, x, grad, center, diff, alpha, exchange);
    ctx.recorder.step(step + 1, loss);
  }
}

void original_master(Context& ctx, const EasgdOriginalConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  const auto alpha = static_cast<float>(cfg.elastic_alpha);
  const std::int64_t tau = cfg.comm_period_steps, rounds = (ctx.steps + tau - 1) / tau;
  Vec center = compute.make_vec(), incoming = compute.make_vec();
  compute.init_params(center);
  ModelClock clock(ctx.workers, tau, ctx.steps);
  clock.start(ctx.recorder, center);
  for (std::int64_t round = 0; round < rounds; ++round) {
    for (Rank j = 1; j <= ctx.workers; ++j) {                  // 1. j = worker after worker, rank order
      ex.send(ctx.comm, j, kTagCenter, center);                // 2. send W~ to worker j
      ex.recv(ctx.comm, j, kTagWeights, incoming);             // 3. receive W^j after its F/B
      rules::elastic_diff(incoming, incoming, center, alpha);  // 4. W~ += alpha (W^j - W~)
      rules::axpy(center, 1.0f, incoming);
      compute.charge_elementwise(center.count(), 4);
      clock.tick(ctx.recorder, center);
    }
  }
  clock.final(ctx.recorder, center);
}

}  // namespace

AlgorithmSpec easgd_original_spec() {
  return {"easgd_original", "round-robin EASGD: a CPU master on rank 0 serves the workers one at a time in rank order",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdOriginalConfig cfg;
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0);
            cfg.comm_period_steps = r.integer("comm_period_steps", 1, 1, 1'000'000);
            cfg.overlap = r.boolean("overlap", true);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              if (ctx.comm.rank() == kMaster) {
                original_master(ctx, cfg);
              } else {
                original_worker(ctx, cfg);
              }
            };
          }};
}

}  // namespace dts
