// Asynchronous SGD with a parameter server (Dean et al. 2012; papers/easgd_hpc.md §4.2). Rank 0, the
// master, holds W and the optimizer; ranks 1..P are workers. Worker i computes dW_i at its copy of W, sends
// it, and waits for the W the master returns. The master serves one gradient at a time, first come first
// served (the lock of the paper), applying
//   W <- W - eta dW_i                    (the experiment's optimizer)
// then returning W to worker i. With optimizer kind "momentum" the master keeps V and applies eq. (3)-(4)
// to each incoming gradient: Async MSGD (§4.3, registered as async_msgd). A gradient is stale by the
// updates other workers made since its worker's last pull. A worker that fails (the simulator's failures) is
// dropped and the master carries on with the others; a gradient it was receiving from that worker is not applied.
#include <string>
#include <vector>

#include "algorithms/async_workers.hpp"

namespace dts {
namespace {

constexpr Rank kMaster = 0;
constexpr WorkerTags kTags{tags::kAsyncSgdUp, tags::kAsyncSgdDown, tags::kAsyncSgdDone};
constexpr Tag kTagGrad = kTags.up;
constexpr Tag kTagWeights = kTags.down;
constexpr Tag kTagDone = kTags.done;

struct AsyncSgdConfig {
  bool packed = true;
};

void async_sgd_master(Context& ctx, const AsyncSgdConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  Vec params = compute.make_vec(), incoming = compute.make_vec(), none(0, true);
  compute.init_params(params);
  ModelClock clock(ctx.workers, 1, ctx.steps);
  clock.start(ctx.recorder, params);
  std::vector<Rank> workers;
  for (Rank r = 1; r <= ctx.workers; ++r) workers.push_back(r);
  enum { kGrad, kDone };
  std::vector<Request> rx(2);
  std::vector<Transfer> replies;
  std::vector<char> finished(workers.size() + 1, 0);  // by rank: sent "done"
  int running = ctx.workers;                          // neither finished nor failed
  // A failed worker: no receive waits for it from now on, and it counts as finished unless it was. The master
  // needs no particular worker, so it carries on with the others (as easgd_async's center does).
  const auto drop = [&](Rank r) {
    if (std::erase(workers, r) > 0 && !finished[static_cast<std::size_t>(r)]) --running;
  };
  rx[kDone] = ctx.comm.irecv_any(workers, kTagDone, none);
  while (running > 0) {
    if (!rx[kGrad].valid()) rx[kGrad] = ex.irecv_first(ctx.comm, workers, kTagGrad, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. first come, first served
    if (got.status == Status::kPeerFailed) {             // carry on without that worker
      drop(got.source);
      if (running > 0 && got.index == kDone) rx[kDone] = ctx.comm.irecv_any(workers, kTagDone, none);
      continue;
    }
    require_ok(got.status, got.source, "async_sgd master");
    if (got.index == kDone) {
      finished[static_cast<std::size_t>(got.source)] = 1;
      if (--running > 0) rx[kDone] = ctx.comm.irecv_any(workers, kTagDone, none);
      continue;
    }
    const Status rest = ex.irecv_rest(ctx.comm, got.source, kTagGrad, incoming).wait();
    if (rest == Status::kPeerFailed) {  // failed mid-message: its gradient is dropped
      drop(got.source);
      continue;
    }
    require_ok(rest, got.source, "async_sgd master");
    compute.optimizer_step(params, incoming);                                // 2. W <- W - eta dW_i, one at a time
    replies.push_back(ex.isend(ctx.comm, got.source, kTagWeights, params));  // 3. return W to worker i
    clock.tick(ctx.recorder, params);
    std::erase_if(replies, [](Transfer& t) { return t.test(); });
  }
  if (rx[kGrad].valid()) rx[kGrad].cancel();
  for (auto& t : replies) {
    const Status st = t.wait();  // a reply to a worker that failed since is lost
    if (st != Status::kOk && st != Status::kPeerFailed)
      throw CommError(std::string("async_sgd master: ") + to_string(st));
  }
  clock.final(ctx.recorder, params);
}

}  // namespace

AlgorithmSpec async_sgd_spec() {
  return {"async_sgd", "asynchronous SGD: FCFS parameter server on rank 0, one gradient at a time",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            AsyncSgdConfig cfg;
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              if (ctx.comm.rank() == kMaster) {
                async_sgd_master(ctx, cfg);
              } else {
                param_server_worker(ctx, ParamExchange(ctx.compute, cfg.packed), kMaster, kTags);
              }
            };
          }};
}

}  // namespace dts
