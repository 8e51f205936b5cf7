// Asynchronous EASGD (Zhang, Choromanska & LeCun 2015; the FCFS parameter-server form of You, Buluc &
// Demmel, SC17, papers/easgd_hpc.md §5.1). Rank 0 holds the center W~; ranks 1..P are workers
// (algorithms/async_workers.cpp). Every tau local steps worker i sends its weights W^i and receives the center
// as it is at that moment; both then move toward each other by alpha = eta * rho:
//   worker  W^i <- W^i - eta * dW^i - alpha (W^i - W~)        (eq. 1; with momentum, eq. 5-6)
//   center  W~  <- W~ + alpha (W^i - W~)                      (single-worker form of eq. 2)
// The center serves one worker at a time, first come first served. The paper's default resolution
// eta * rho = 0.9 / P is used unless elastic_alpha is given.
#include <array>

#include "algorithms/async_workers.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kCenter = 0;
constexpr WorkerTags kTags{tags::kEasgdUp, tags::kEasgdDown, tags::kEasgdDone};

struct EasgdAsyncConfig {
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
  bool packed = true;
};

void easgd_center(Context& ctx, const ParamExchange& ex, float alpha, std::int64_t tau) {
  Compute& compute = ctx.compute;
  Vec center = compute.make_vec(), none(0, true);
  // Two receive buffers: the next worker's weights can arrive into one while the other is being used.
  std::array<Vec, 2> incoming{compute.make_vec(), compute.make_vec()};
  std::size_t next = 0;
  compute.init_params(center);
  ModelClock clock(ctx.workers, tau, ctx.steps);
  clock.start(ctx.recorder, center);
  std::vector<Rank> workers;
  for (Rank r = 1; r <= ctx.workers; ++r) workers.push_back(r);
  enum { kWeights, kDone };
  std::vector<Request> rx(2);
  std::vector<Transfer> replies;
  rx[kDone] = ctx.comm.irecv_any(workers, kTags.done, none);
  rx[kWeights] = ex.irecv_first(ctx.comm, workers, kTags.up, incoming[next]);
  for (int running = ctx.workers; running > 0;) {
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. first come, first served
    DTS_ASSERT(got.status == Status::kOk, "easgd center: receive failed");
    if (got.index == kDone) {
      if (--running > 0) rx[kDone] = ctx.comm.irecv_any(workers, kTags.done, none);
      continue;
    }
    Vec& w = incoming[next];
    ex.recv_rest(ctx.comm, got.source, kTags.up, w);
    next = 1 - next;
    rx[kWeights] = ex.irecv_first(ctx.comm, workers, kTags.up, incoming[next]);
    replies.push_back(ex.isend(ctx.comm, got.source, kTags.down, center));  // 2. reply with the center as it is
    rules::elastic_diff(w, w, center, alpha);                               // 3. W~ += alpha (W^i - W~)
    rules::axpy(center, 1.0f, w);
    compute.charge_elementwise(w.count(), 4);
    clock.tick(ctx.recorder, center);
    std::erase_if(replies, [](Transfer& r) { return r.test(); });
  }
  rx[kWeights].cancel();
  for (auto& r : replies) r.wait_ok();
  clock.final(ctx.recorder, center);
}

}  // namespace

AlgorithmSpec easgd_async_spec() {
  return {"easgd_async", "asynchronous EASGD: FCFS center on rank 0, elastic pulls every tau steps",
          [](int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdAsyncConfig cfg;
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0);
            cfg.comm_period_steps = r.integer("comm_period_steps", 1, 1, 1'000'000);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              const ParamExchange ex(ctx.compute, cfg.packed);
              const auto alpha = static_cast<float>(cfg.elastic_alpha);
              if (ctx.comm.rank() == kCenter) {
                easgd_center(ctx, ex, alpha, cfg.comm_period_steps);
              } else {
                elastic_async_worker(ctx, ex, kCenter, kTags, alpha, cfg.comm_period_steps);
              }
            };
          }};
}

}  // namespace dts
