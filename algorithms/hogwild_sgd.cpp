// Hogwild SGD (Recht et al. 2011; papers/easgd_hpc.md §4.4): async_sgd without the master's lock. Rank 0
// holds W and the optimizer and runs one server activity per worker (Node::spawn); the servers apply
// their workers' gradients to the shared W concurrently, with no mutex:
//   W <- W - eta dW_i                    (the experiment's optimizer, on W as it is when the update runs)
// and return W to their worker. Ranks 1..P are workers exactly as in async_sgd. With several cores (or a
// sleep-charged test Compute) the update times of different workers overlap. Under realexec the
// unsynchronized update is Hogwild's benign race on floats (and on a momentum buffer, if any). A worker that fails
// (the simulator's failures) ends its server; the others go on (a gradient it was sending is not applied).
#include <memory>
#include <string>
#include <vector>

#include "algorithms/async_workers.hpp"

namespace dts {
namespace {

constexpr Rank kMaster = 0;
constexpr WorkerTags kTags{tags::kHogwildSgdUp, tags::kHogwildSgdDown, tags::kHogwildSgdDone};
constexpr Tag kTagGrad = kTags.up;
constexpr Tag kTagWeights = kTags.down;
constexpr Tag kTagDone = kTags.done;

struct HogwildSgdConfig {
  bool packed = true;
};

// One server activity: serves worker i until it is done. `params` and `clock` are shared, unlocked.
void hogwild_sgd_server(Context& ctx, const ParamExchange& ex, Rank i, Vec& params, ModelClock& clock) {
  Vec incoming = ctx.compute.make_vec(), none(0, true);
  const Rank from[] = {i};
  enum { kGrad, kDone };
  std::vector<Request> rx(2);
  rx[kDone] = ctx.comm.irecv(i, kTagDone, none);
  std::vector<Transfer> replies;
  while (true) {
    rx[kGrad] = ex.irecv_first(ctx.comm, from, kTagGrad, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. dW_i arrives (or worker i is done)
    if (got.status == Status::kPeerFailed) break;        // worker i failed: its server ends
    require_ok(got.status, got.source, "hogwild_sgd server");
    if (got.index == kDone) break;
    const Status rest = ex.irecv_rest(ctx.comm, i, kTagGrad, incoming).wait();
    if (rest == Status::kPeerFailed) break;  // failed mid-message: its gradient is dropped
    require_ok(rest, i, "hogwild_sgd server");
    ctx.compute.optimizer_step(params, incoming);                   // 2. W <- W - eta dW_i, no lock
    replies.push_back(ex.isend(ctx.comm, i, kTagWeights, params));  // 3. return W to worker i
    clock.tick(ctx.recorder, params);
    std::erase_if(replies, [](Transfer& t) { return t.test(); });
  }
  if (rx[kGrad].valid()) rx[kGrad].cancel();
  for (auto& t : replies) {
    const Status st = t.wait();  // a reply to a worker that failed since is lost
    if (st != Status::kOk && st != Status::kPeerFailed)
      throw CommError("hogwild_sgd server: " + std::string(to_string(st)));
  }
}

void hogwild_sgd_master(Context& ctx, const HogwildSgdConfig& cfg) {
  const ParamExchange ex(ctx.compute, cfg.packed);
  Vec params = ctx.compute.make_vec();
  ctx.compute.init_params(params);
  ModelClock clock(ctx.workers, 1, ctx.steps);
  clock.start(ctx.recorder, params);
  std::vector<std::unique_ptr<Activity>> servers;
  for (Rank i = 1; i <= ctx.workers; ++i) {  // one server per worker, all sharing W
    servers.push_back(ctx.node.spawn("hogwild-sgd-server-" + std::to_string(i),
                                     [&, i] { hogwild_sgd_server(ctx, ex, i, params, clock); }));
  }
  for (auto& s : servers) s->join();
  clock.final(ctx.recorder, params);
}

}  // namespace

AlgorithmSpec hogwild_sgd_spec() {
  return {"hogwild_sgd", "Hogwild SGD: lock-free parameter server on rank 0, one concurrent server per worker",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            HogwildSgdConfig cfg;
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              if (ctx.comm.rank() == kMaster) {
                hogwild_sgd_master(ctx, cfg);
              } else {
                param_server_worker(ctx, ParamExchange(ctx.compute, cfg.packed), kMaster, kTags);
              }
            };
          }};
}

}  // namespace dts
