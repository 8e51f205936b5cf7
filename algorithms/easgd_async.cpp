// Asynchronous EASGD (Zhang, Choromanska & LeCun 2015; the FCFS parameter-server form of You, Buluc &
// Demmel, SC17, papers/easgd_hpc.md §5.1). Rank 0 holds the center W~; ranks 1..P are workers.
// Every tau local steps worker i sends its weights W^i and receives the center as it is at that moment;
// both then move toward each other by alpha = eta * rho:
//   worker  W^i <- W^i - eta * dW^i - alpha (W^i - W~)        (eq. 1; with momentum, eq. 5-6)
//   center  W~  <- W~ + alpha (W^i - W~)                      (single-worker form of eq. 2)
// The center serves one worker at a time, first come first served. The paper's default resolution
// eta * rho = 0.9 / P is used unless elastic_alpha is given.
#include <cmath>

#include "algorithms/algorithm.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kCenter = 0;
constexpr Tag kTagWeights = tags::kEasgd + 0;  // worker -> center: W^i
constexpr Tag kTagCenter = tags::kEasgd + 1;   // center -> worker: W~
constexpr Tag kTagDone = tags::kEasgd + 2;     // worker -> center: no more exchanges

struct EasgdAsyncConfig {
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
};

void easgd_worker(Context& ctx, float alpha, std::int64_t tau) {
  Compute& compute = ctx.compute;
  Vec x = compute.make_vec(), grad = compute.make_vec(), center = compute.make_vec(), diff = compute.make_vec();
  compute.init_params(x);
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const bool exchange = step % tau == 0;
    Request center_rx;
    if (exchange) {
      center_rx = ctx.comm.irecv(kCenter, kTagCenter, center);  // 1. ask: send W^i, the center replies
      ctx.comm.send(kCenter, kTagWeights, x);
    }
    const float loss = compute.forward_backward(x, grad);       // 2. gradient at W^i, overlapping the reply
    if (exchange) {
      center_rx.wait_ok();
      rules::elastic_diff(diff, x, center, alpha);              // 3. alpha (W^i - W~) from pre-update W^i
      compute.charge_elementwise(x.count(), 3);
    }
    compute.optimizer_step(x, grad);                            // 4. W^i -= eta dW^i (or momentum)
    if (exchange) {
      rules::axpy(x, -1.0f, diff);                              // 5. elastic pull toward the center
      compute.charge_elementwise(x.count(), 3);
    }
    ctx.recorder.step(step + 1, loss);
  }
  ctx.comm.send(kCenter, kTagDone, Vec(0, true));
}

void easgd_center(Context& ctx, float alpha) {
  Compute& compute = ctx.compute;
  const int P = ctx.workers;
  Vec center = compute.make_vec(), incoming = compute.make_vec(), none(0, true);
  compute.init_params(center);
  if (ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, center);
  std::vector<Rank> workers;
  for (Rank r = 1; r <= P; ++r) workers.push_back(r);
  enum { kWeights, kDone };
  std::vector<Request> rx(2), replies;
  rx[kDone] = ctx.comm.irecv_any(workers, kTagDone, none);
  std::int64_t updates = 0;
  for (int running = P; running > 0;) {
    if (!rx[kWeights].valid()) rx[kWeights] = ctx.comm.irecv_any(workers, kTagWeights, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);        // 1. first come, first served
    DTS_ASSERT(got.status == Status::kOk, "easgd center: receive failed");
    if (got.index == kDone) {
      if (--running > 0) rx[kDone] = ctx.comm.irecv_any(workers, kTagDone, none);
      continue;
    }
    replies.push_back(ctx.comm.isend(got.source, kTagCenter, center));  // 2. reply with W~ before the update
    rules::elastic_diff(incoming, incoming, center, alpha);             // 3. W~ += alpha (W^i - W~)
    rules::axpy(center, 1.0f, incoming);
    compute.charge_elementwise(center.count(), 4);
    ++updates;
    std::erase_if(replies, [](Request& r) { return r.test(); });
    if (updates % P == 0 && ctx.recorder.eval_due(updates / P)) ctx.recorder.evaluate(updates / P, center);
  }
  rx[kWeights].cancel();
  for (auto& r : replies) r.wait_ok();
  ctx.recorder.evaluate(updates / P, center, /*final=*/true);
}

}  // namespace

AlgorithmSpec easgd_async_spec() {
  return {"easgd_async", "asynchronous EASGD: FCFS center on rank 0, elastic pulls every tau steps",
          [](int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdAsyncConfig cfg;
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0);
            cfg.comm_period_steps = r.integer("comm_period_steps", 1, 1, 1'000'000);
            return [cfg](Context& ctx) {
              const double alpha = cfg.elastic_alpha;
              if (ctx.comm.rank() == kCenter) {
                easgd_center(ctx, static_cast<float>(alpha));
              } else {
                easgd_worker(ctx, static_cast<float>(alpha), cfg.comm_period_steps);
              }
            };
          }};
}

}  // namespace dts
