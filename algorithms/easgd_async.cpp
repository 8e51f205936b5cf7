// Asynchronous EASGD (Zhang, Choromanska & LeCun 2015; the FCFS parameter-server form of You, Buluc &
// Demmel, SC17, papers/easgd_hpc.md §5.1). Rank 0 holds the center W~; ranks 1..P are workers
// (algorithms/async_workers.cpp). Every tau local steps worker i sends its weights W^i and receives the center
// as it is at that moment; both then move toward each other by alpha = eta * rho:
//   worker  W^i <- W^i - eta * dW^i - alpha (W^i - W~)        (eq. 1; with momentum, eq. 5-6)
//   center  W~  <- W~ + alpha (W^i - W~)                      (single-worker form of eq. 2)
// The center serves one worker at a time, first come first served. The paper's default resolution
// eta * rho = 0.9 / P is used unless elastic_alpha is given.
// A worker that fails (kPeerFailed, the simulator's failures) is dropped and the center carries on with the
// others: failures are what the asynchronous methods are for (papers/easgd_hpc.md §14), and a FCFS center
// needs no particular worker; the update it was receiving from that worker, if any, is not applied.
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
  std::vector<char> finished(workers.size() + 1, 0);  // by rank: sent "done"
  const auto post = [&](std::size_t which) {          // from the workers that have not failed
    rx[which] = which == kDone ? ctx.comm.irecv_any(workers, kTags.done, none)
                               : ex.irecv_first(ctx.comm, workers, kTags.up, incoming[next]);
  };
  int running = ctx.workers;  // neither finished nor failed
  // A failed worker: no receive waits for it from now on, and it counts as finished unless it was.
  const auto drop = [&](Rank r) {
    if (std::erase(workers, r) > 0 && !finished[static_cast<std::size_t>(r)]) --running;
  };
  post(kDone);
  post(kWeights);
  while (running > 0) {
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. first come, first served
    if (got.status == Status::kPeerFailed) {             // carry on without that worker
      drop(got.source);
      if (running > 0) post(got.index);
      continue;
    }
    require_ok(got.status, got.source, "easgd center");
    if (got.index == kDone) {
      finished[static_cast<std::size_t>(got.source)] = 1;
      if (--running > 0) post(kDone);
      continue;
    }
    Vec& w = incoming[next];
    if (ex.irecv_rest(ctx.comm, got.source, kTags.up, w).wait() == Status::kPeerFailed) {
      drop(got.source);  // failed mid-message: its update is dropped
      if (running > 0) post(kWeights);
      continue;
    }
    next = 1 - next;
    post(kWeights);
    replies.push_back(ex.isend(ctx.comm, got.source, kTags.down, center));  // 2. reply with the center as it is
    rules::elastic_diff(w, w, center, alpha);                               // 3. W~ += alpha (W^i - W~)
    rules::axpy(center, 1.0f, w);
    compute.charge_elementwise(w.count(), 4);
    clock.tick(ctx.recorder, center);
    std::erase_if(replies, [](Transfer& r) { return r.test(); });
  }
  if (rx[kWeights].valid()) rx[kWeights].cancel();
  for (auto& r : replies) {
    const Status s = r.wait();  // a reply to a worker that failed since is lost
    if (s != Status::kOk && s != Status::kPeerFailed) throw CommError(std::string("easgd center: ") + to_string(s));
  }
  clock.final(ctx.recorder, center);
}

}  // namespace

AlgorithmSpec easgd_async_spec() {
  return {"easgd_async", "asynchronous EASGD: FCFS center on rank 0, elastic pulls every tau steps",
          [](ConfigReader&, int workers) { return workers + 1; },
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
