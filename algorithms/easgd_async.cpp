// Asynchronous EASGD (Zhang, Choromanska & LeCun 2015; the FCFS parameter-server form of You, Buluc &
// Demmel, SC17, papers/easgd_hpc.md §5.1). Rank 0 holds the center W~; ranks 1..P are workers
// (algorithms/async_workers.cpp). Every tau local steps worker i sends its weights W^i and receives the center
// as it is at that moment; both then move toward each other by alpha = eta * rho:
//   worker  W^i <- W^i - eta * dW^i - alpha (W^i - W~)        (eq. 1; with momentum, eq. 5-6)
//   center  W~  <- W~ + alpha (W^i - W~)                      (single-worker form of eq. 2)
// The center serves one worker at a time, first come first served. The paper's default resolution
// eta * rho = 0.9 / P is used unless elastic_alpha is given.
#include "algorithms/async_workers.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kCenter = 0;
constexpr WorkerTags kTags{tags::kEasgd + 0, tags::kEasgd + 1, tags::kEasgd + 2};
// The center's reply: its buffer is not written until the reply is delivered (free_buffer).
constexpr SendOptions kInPlace{.modeled_bytes = std::nullopt, .borrow = true};

struct EasgdAsyncConfig {
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
  bool packed = true;
};

// A reply with one center buffer, read in place until delivered.
struct Reply {
  Transfer transfer;
  std::size_t buffer = 0;
};

// A center buffer other than `current` that no reply in flight reads; a new one if all are read.
std::size_t free_buffer(Compute& compute, std::vector<Vec>& buffers, std::vector<Reply>& replies, std::size_t current) {
  for (std::size_t b = 0; b < buffers.size(); ++b) {
    if (b != current &&
        std::none_of(replies.begin(), replies.end(), [&](Reply& r) { return r.buffer == b && !r.transfer.test(); })) {
      return b;
    }
  }
  buffers.push_back(compute.make_vec());
  return buffers.size() - 1;
}

void easgd_center(Context& ctx, const ParamExchange& ex, float alpha, std::int64_t tau) {
  Compute& compute = ctx.compute;
  // W~ lives in buffers[current]. The reply reads it in place, so the update writes W~ + alpha (W^i - W~)
  // into another buffer (two suffice unless replies queue up on the wire), then that one becomes W~.
  std::vector<Vec> buffers;
  buffers.push_back(compute.make_vec());
  std::size_t current = 0;
  Vec incoming = compute.make_vec(), none(0, true);
  compute.init_params(buffers[current]);
  ModelClock clock(ctx.workers, tau, ctx.steps);
  clock.start(ctx.recorder, buffers[current]);
  std::vector<Rank> workers;
  for (Rank r = 1; r <= ctx.workers; ++r) workers.push_back(r);
  enum { kWeights, kDone };
  std::vector<Request> rx(2);
  std::vector<Reply> replies;
  rx[kDone] = ctx.comm.irecv_any(workers, kTags.done, none);
  for (int running = ctx.workers; running > 0;) {
    if (!rx[kWeights].valid()) rx[kWeights] = ex.irecv_first(ctx.comm, workers, kTags.up, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. first come, first served
    DTS_ASSERT(got.status == Status::kOk, "easgd center: receive failed");
    if (got.index == kDone) {
      if (--running > 0) rx[kDone] = ctx.comm.irecv_any(workers, kTags.done, none);
      continue;
    }
    ex.recv_rest(ctx.comm, got.source, kTags.up, incoming);
    replies.push_back({ex.isend(ctx.comm, got.source, kTags.down, buffers[current], kInPlace), current});  // 2. reply
    const std::size_t next = free_buffer(compute, buffers, replies, current);
    rules::elastic_diff(incoming, incoming, buffers[current], alpha);  // 3. W~ += alpha (W^i - W~)
    rules::copy(buffers[next], buffers[current]);
    rules::axpy(buffers[next], 1.0f, incoming);
    current = next;
    compute.charge_elementwise(incoming.count(), 4);
    clock.tick(ctx.recorder, buffers[current]);
    std::erase_if(replies, [](Reply& r) { return r.transfer.test(); });
  }
  rx[kWeights].cancel();
  for (auto& r : replies) r.transfer.wait_ok();
  clock.final(ctx.recorder, buffers[current]);
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
