// Asynchronous EASGD as Zhang, Choromanska & LeCun (2015) run it and as the MPCA paper configures it for its
// comparison (papers/mpca_sgd.md §5.2): the server on MPCA's driver, rank 0; workers on ranks 1..K. Every tau
// local steps worker i pauses, downloads x~ (blocking), computes d = alpha (x^i - x~), applies x^i <- x^i - d,
// resumes training and sends d without waiting for it; the server adds each d as it arrives: x~ <- x~ + d.
// It differs from easgd_async (the FCFS center of You et al., papers/easgd_hpc.md §5.1) in two ways that show
// in time and in the model: easgd_async's worker blocks while it uploads W^i and the center computes the
// elastic difference against x~ as it is when W^i arrives; here the worker blocks only for the download, and
// the server applies a d computed against the x~ the worker downloaded, however many other d's arrived since.
// The elastic exchange conserves x~ + sum_i x^i: only the gradient steps move it. The server ends once every
// worker has sent its ceil(steps / tau) d's or failed (a failed worker is dropped, as easgd_async does).
#include <string>

#include "algorithms/async_workers.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kServer = 0;
// easgd_async's tags, as measgd_async's (the two never run together): d up, x~ down, and the zero-length request
// on the tag of easgd_async's zero-length "done".
constexpr Tag kUp = tags::kEasgdUp, kDown = tags::kEasgdDown, kRequest = tags::kEasgdDone;
constexpr SendOptions kBorrowed{.modeled_bytes = std::nullopt, .borrow = true};

struct EasgdDriverConfig {
  double elastic_alpha = 0;  // defaults to 0.9 / K (§5.2: K alpha = 0.9)
  std::int64_t comm_period_steps = 20;
  bool packed = true;
};

std::int64_t exchanges(std::int64_t steps, std::int64_t tau) { return (steps + tau - 1) / tau; }

void easgd_server(Context& ctx, const ParamExchange& ex, std::int64_t tau) {
  Compute& compute = ctx.compute;
  Vec center = compute.make_vec(), d = compute.make_vec(), none(0, true);
  compute.init_params(center);
  ModelClock clock(ctx.workers, tau, ctx.steps);
  clock.start(ctx.recorder, center);
  std::vector<Rank> workers;
  for (Rank r = 1; r <= ctx.workers; ++r) workers.push_back(r);
  // d's still to come, by rank; a worker is running while it owes some.
  std::vector<std::int64_t> owed(static_cast<std::size_t>(ctx.workers) + 1, exchanges(ctx.steps, tau));
  int running = ctx.workers;
  enum { kRequests, kDs };
  std::vector<Request> rx(2);
  std::vector<Transfer> replies;
  const auto post = [&](std::size_t which) {
    rx[which] =
        which == kRequests ? ctx.comm.irecv_any(workers, kRequest, none) : ex.irecv_first(ctx.comm, workers, kUp, d);
  };
  const auto drop = [&](Rank r) {
    if (std::erase(workers, r) > 0 && owed[static_cast<std::size_t>(r)] > 0) --running;
  };
  post(kRequests);
  post(kDs);
  while (running > 0) {
    const Comm::Completion got = ctx.comm.wait_any(rx);
    if (got.status == Status::kPeerFailed) {
      drop(got.source);
      if (running > 0) post(got.index);
      continue;
    }
    require_ok(got.status, got.source, "easgd_driver server");
    if (got.index == kRequests) {  // x~ as it is now, a snapshot: the server goes on adding d's
      replies.push_back(ex.isend(ctx.comm, got.source, kDown, center));
      post(kRequests);
    } else {
      const bool whole = ex.irecv_rest(ctx.comm, got.source, kUp, d).wait() == Status::kOk;
      if (whole) {
        rules::axpy(center, 1.0f, d);  // x~ <- x~ + d
        compute.charge_elementwise(d.count(), 2);
        clock.tick(ctx.recorder, center);
        if (--owed[static_cast<std::size_t>(got.source)] == 0) --running;
      } else {
        drop(got.source);  // failed mid-message: its d is lost
      }
      if (running > 0) post(kDs);
    }
    std::erase_if(replies, [](Transfer& r) { return r.test(); });
  }
  for (auto& r : rx)
    if (r.valid()) r.cancel();
  for (auto& r : replies) {
    const Status s = r.wait();  // a reply to a worker that failed since is lost
    if (s != Status::kOk && s != Status::kPeerFailed)
      throw CommError(std::string("easgd_driver server: ") + to_string(s));
  }
  clock.final(ctx.recorder, center);
}

void easgd_worker(Context& ctx, const ParamExchange& ex, float alpha, std::int64_t tau) {
  Compute& compute = ctx.compute;
  Vec x = compute.make_vec(), grad = compute.make_vec(), center = compute.make_vec();
  Slice d = center;  // d overwrites the downloaded x~, not needed after it
  compute.init_params(x);
  Transfer upload;
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    if (step % tau == 0) {
      upload.wait_ok();                                // the last d has left: its buffer is free
      ctx.comm.send(kServer, kRequest, Vec(0, true));  // 1. pause; download x~ (blocking)
      ex.recv(ctx.comm, kServer, kDown, center);
      rules::elastic_diff(d, x, center, alpha);  // 2. d = alpha (x^i - x~)
      rules::axpy(x, -1.0f, d);                  // 3. x^i <- x^i - d
      compute.charge_elementwise(x.count(), 5);
      upload = ex.isend(ctx.comm, kServer, kUp, d, kBorrowed);  // 4. resume; d goes up async
    }
    const float loss = compute.forward_backward(x, grad);
    compute.optimizer_step(x, grad);
    ctx.recorder.step(step + 1, loss);
  }
  upload.wait_ok();
}

}  // namespace

AlgorithmSpec easgd_driver_spec() {
  return {"easgd_driver",
          "asynchronous EASGD of Zhang et al. with its server on MPCA's driver: blocking download of x~, d sent async",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdDriverConfig cfg;
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0);
            cfg.comm_period_steps = r.integer("comm_period_steps", 20, 1, 1'000'000);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              const ParamExchange ex(ctx.compute, cfg.packed);
              if (ctx.comm.rank() == kServer) {
                easgd_server(ctx, ex, cfg.comm_period_steps);
              } else {
                easgd_worker(ctx, ex, static_cast<float>(cfg.elastic_alpha), cfg.comm_period_steps);
              }
            };
          }};
}

}  // namespace dts
