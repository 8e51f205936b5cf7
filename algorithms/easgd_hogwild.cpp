// Hogwild EASGD (You, Buluc & Demmel, SC17, papers/easgd_hpc.md §5.3): Async EASGD without the lock
// between consecutive center updates. Rank 0 holds the center W~ and runs one server activity per worker
// (Node::spawn), so several workers are served at once; ranks 1..P are workers exactly as in easgd_async.
// The center is shared by the servers without a mutex. Staleness is explicit: a server reads a snapshot of
// W~, replies with it, computes alpha (W^i - snapshot) (the charged update time passes here, while other
// servers may add their deltas), then adds its delta to W~ as it is by then (workers: async_workers.cpp):
//   worker  W^i <- W^i - eta dW^i - alpha (W^i - snapshot)    (eq. 1)
//   server  W~  <- W~ + alpha (W^i - snapshot)                (eq. 2, single worker, stale snapshot)
// With several cores (or a sleep-charged test Compute) the servers' update times overlap, which is the
// point of Hogwild. Under realexec the unsynchronized add is Hogwild's benign race on floats. A worker that fails
// (the simulator's failures) ends its server; the others go on (an update it was sending is not applied).
#include <memory>
#include <string>
#include <vector>

#include "algorithms/async_workers.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr Rank kCenter = 0;
// The server replies to worker i with its snapshot of W~.
constexpr WorkerTags kTags{tags::kEasgdHogwildUp, tags::kEasgdHogwildDown, tags::kEasgdHogwildDone};
constexpr Tag kTagWeights = kTags.up;
constexpr Tag kTagCenter = kTags.down;
constexpr Tag kTagDone = kTags.done;

struct EasgdHogwildConfig {
  double elastic_alpha = 0;  // eta * rho; defaults to 0.9 / P
  std::int64_t comm_period_steps = 1;
  bool packed = true;
};

// One server activity: serves worker i until it is done. `center` and `clock` are shared, unlocked.
void hogwild_server(Context& ctx, const ParamExchange& ex, float alpha, Rank i, Vec& center, ModelClock& clock) {
  Compute& compute = ctx.compute;
  Vec incoming = compute.make_vec(), snapshot = compute.make_vec(), none(0, true);
  const Rank from[] = {i};
  enum { kWeights, kDone };
  std::vector<Request> rx(2);
  rx[kDone] = ctx.comm.irecv(i, kTagDone, none);
  std::vector<Transfer> replies;
  while (true) {
    rx[kWeights] = ex.irecv_first(ctx.comm, from, kTagWeights, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. W^i arrives (or i is done)
    if (got.status == Status::kPeerFailed) break;        // worker i failed: its server ends
    require_ok(got.status, got.source, "easgd_hogwild server");
    if (got.index == kDone) break;
    const Status rest = ex.irecv_rest(ctx.comm, i, kTagWeights, incoming).wait();
    if (rest == Status::kPeerFailed) break;  // failed mid-message: its update is dropped
    require_ok(rest, i, "easgd_hogwild server");
    rules::copy(snapshot, center);                                   // 2. read W~ unlocked: a snapshot
    replies.push_back(ex.isend(ctx.comm, i, kTagCenter, snapshot));  // 3. reply with it
    rules::elastic_diff(incoming, incoming, snapshot, alpha);        // 4. delta = alpha (W^i - snapshot);
    compute.charge_elementwise(center.count(), 4);                   //    meanwhile others may update W~
    rules::axpy(center, 1.0f, incoming);                             // 5. W~ += delta, onto W~ as it is
    clock.tick(ctx.recorder, center);
    std::erase_if(replies, [](Transfer& t) { return t.test(); });
  }
  if (rx[kWeights].valid()) rx[kWeights].cancel();
  for (auto& t : replies) {
    const Status st = t.wait();  // a reply to a worker that failed since is lost
    if (st != Status::kOk && st != Status::kPeerFailed)
      throw CommError("easgd_hogwild server: " + std::string(to_string(st)));
  }
}

void hogwild_master(Context& ctx, const EasgdHogwildConfig& cfg) {
  Compute& compute = ctx.compute;
  const ParamExchange ex(compute, cfg.packed);
  Vec center = compute.make_vec();
  compute.init_params(center);
  ModelClock clock(ctx.workers, cfg.comm_period_steps, ctx.steps);
  clock.start(ctx.recorder, center);
  std::vector<std::unique_ptr<Activity>> servers;
  for (Rank i = 1; i <= ctx.workers; ++i) {  // one server per worker, all sharing the center
    servers.push_back(ctx.node.spawn("easgd-hogwild-server-" + std::to_string(i), [&, i] {
      hogwild_server(ctx, ex, static_cast<float>(cfg.elastic_alpha), i, center, clock);
    }));
  }
  for (auto& s : servers) s->join();
  clock.final(ctx.recorder, center);
}

}  // namespace

AlgorithmSpec easgd_hogwild_spec() {
  return {"easgd_hogwild", "Hogwild EASGD: lock-free center on rank 0, one concurrent server per worker",
          [](ConfigReader&, int workers) { return workers + 1; },
          [](ConfigReader& r, int workers) -> RankMain {
            EasgdHogwildConfig cfg;
            cfg.elastic_alpha = r.number("elastic_alpha", 0.9 / workers, 1e-9, 1.0);
            cfg.comm_period_steps = r.integer("comm_period_steps", 1, 1, 1'000'000);
            cfg.packed = read_packed(r);
            return [cfg](Context& ctx) {
              if (ctx.comm.rank() == kCenter) {
                hogwild_master(ctx, cfg);
              } else {
                elastic_async_worker(ctx, ParamExchange(ctx.compute, cfg.packed), kCenter, kTags,
                                     static_cast<float>(cfg.elastic_alpha), cfg.comm_period_steps);
              }
            };
          }};
}

}  // namespace dts
