// The MXNet-style parameter server (papers/bidmach.md §9.1; MXNet's kvstore "dist_sync" and "dist_async"
// with update_on_kvstore), the baseline of the BIDMach experiments. Every rank is a worker and, co-located
// with it, a server: two activities (Node::spawn) sharing its Comm (distinct tags) and Compute (the worker
// trains; the server alone uses the optimizer and its state). The model's parameter blocks are the keys, spread
// over the servers as MXNet's kvstore does (algorithms/ps_sharding.hpp). Each step a worker computes its
// gradient, pushes each server its pieces of it (one message per server, packed) and pulls the pieces' new
// values back (one message per server); it starts its next step once it has all of them.
//   ps_sync   a server waits for every worker's push of its pieces, sums them in worker order (averages them
//             by default: MXNet's rescale_grad of 1 / (batch x workers) in dist_sync), applies the
//             experiment's optimizer to its pieces and answers every worker's pull: synchronous SGD on the
//             averaged gradient, the same on every backend.
//   ps_async  a server applies each push alone as it arrives, first come first served, and answers that
//             worker's pull with its pieces as they are then; once every worker has pushed its last step the
//             servers send their pieces to rank 0, whose model is the run's result.
// The optimizer's state lives on the server that owns a piece (Compute::optimizer_step_range at the piece's
// offset). The learning-rate schedule's iteration on a server is the number of updates it has applied:
// the round in ps_sync (as a worker's step), the count of pushes in ps_async (MXNet's per-key update count,
// so the schedule advances once per push of any worker). A failed rank takes its server with it: a worker
// that needs its keys, or a ps_sync server that waits for its push, stops the run (PeerFailed); a ps_async
// server drops a failed worker and serves the others, so a ps_async run survives a rank whose server holds
// no key. The ps_async result's gather to rank 0 is part of the run's simulated time (one model's worth of
// bytes into rank 0 after the last step).
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/ps_sharding.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

constexpr SendOptions kBorrowed{.modeled_bytes = std::nullopt, .borrow = true};

struct PsConfig {
  bool sync = true;
  std::size_t bigarray_bound = 1'000'000;
  bool average = true;  // ps_sync: average the pushes (else sum them)
};

// The optimizer on server s's packed pieces, at `iteration`.
void apply_update(Compute& compute, const PsSharding& shards, int s, Slice model, ConstSlice grads,
                  std::int64_t iteration) {
  std::size_t at = 0;
  for (const auto& p : shards.of(s)) {
    compute.optimizer_step_range(model.sub(at, p.count), grads.sub(at, p.count), p.offset, iteration);
    at += p.count;
  }
}

// Waits for every request; any status but kOk throws (PeerFailed for a failed peer), except kPeerFailed
// when `lost_ok` (replies to a worker that failed since).
void wait_all(std::vector<Request>& reqs, const std::string& who, bool lost_ok = false) {
  for (auto& r : reqs) {
    const Status st = r.wait();
    if (!(lost_ok && st == Status::kPeerFailed)) require_ok(st, r.peer(), who);
  }
  reqs.clear();
}

// Replies sent earlier: the finished ones are checked and forgotten.
void reap(std::vector<Request>& sends, const std::string& who, bool lost_ok = false) {
  std::erase_if(sends, [&](Request& r) {
    if (!r.test()) return false;
    const Status st = r.wait();
    if (!(lost_ok && st == Status::kPeerFailed)) require_ok(st, r.peer(), who);
    return true;
  });
}

void sync_server(Context& ctx, const PsSharding& shards, const PsConfig& cfg, Slice model) {
  Compute& compute = ctx.compute;
  const int me = ctx.comm.rank(), P = ctx.workers;
  const std::size_t L = model.count;
  std::vector<Vec> pushed;
  for (int w = 0; w < P; ++w) pushed.emplace_back(L, compute.real());
  std::vector<Request> rx, replies;
  for (std::int64_t round = 0; round < ctx.steps; ++round) {
    for (Rank w = 0; w < P; ++w) rx.push_back(ctx.comm.irecv(w, tags::kPsPush, pushed[static_cast<std::size_t>(w)]));
    wait_all(rx, "ps_sync server");  // 1. every worker's push of my pieces
    Slice sum = pushed[0];
    for (std::size_t w = 1; w < pushed.size(); ++w) rules::axpy(sum, 1.0f, pushed[w]);  // 2. in worker order
    if (P > 1) compute.charge_reduce(L * static_cast<std::size_t>(P - 1), 3);
    if (cfg.average && P > 1) {
      rules::scale(sum, 1.0f / static_cast<float>(P));
      compute.charge_reduce(L, 2);
    }
    apply_update(compute, shards, me, model, sum, round);  // 3. the optimizer on my pieces
    reap(replies, "ps_sync server");
    for (Rank w = 0; w < P; ++w) replies.push_back(ctx.comm.isend(w, tags::kPsPull, model));  // 4. the pulls
  }
  wait_all(replies, "ps_sync server");
}

void async_server(Context& ctx, const PsSharding& shards, Slice model) {
  Compute& compute = ctx.compute;
  const int me = ctx.comm.rank();
  Vec incoming(model.count, compute.real());
  std::vector<Rank> workers;
  for (Rank w = 0; w < ctx.workers; ++w) workers.push_back(w);
  std::vector<std::int64_t> left(workers.size(), ctx.steps);  // pushes still to come, by worker
  std::int64_t remaining = ctx.workers * ctx.steps, updates = 0;
  std::vector<Request> rx(1), replies;
  while (remaining > 0) {
    rx[0] = ctx.comm.irecv_any(workers, tags::kPsPush, incoming);
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. the first push to arrive
    auto& owed = left[static_cast<std::size_t>(got.source)];
    if (got.status == Status::kPeerFailed) {  // a failed worker: serve the others (its own server's keys stop them)
      remaining -= owed;
      owed = 0;
      std::erase(workers, got.source);
      continue;
    }
    require_ok(got.status, got.source, "ps_async server");
    apply_update(compute, shards, me, model, incoming, updates++);  // 2. applied alone
    --owed;
    --remaining;
    reap(replies, "ps_async server", true);
    replies.push_back(ctx.comm.isend(got.source, tags::kPsPull, model));  // 3. its pull: my pieces as they are now
  }
  wait_all(replies, "ps_async server", true);
  ctx.comm.send(0, tags::kPsFinal, model);  // the result, to rank 0
}

void server(Context& ctx, const PsSharding& shards, const PsConfig& cfg) {
  const int me = ctx.comm.rank();
  if (shards.floats(me) == 0) return;  // no keys
  Vec model(shards.floats(me), ctx.compute.real());
  {
    Vec full = ctx.compute.make_vec();
    ctx.compute.init_params(full);  // the workers' initial model
    shards.gather(me, full, model);
  }
  if (cfg.sync) {
    sync_server(ctx, shards, cfg, model);
  } else {
    async_server(ctx, shards, model);
  }
}

void worker(Context& ctx, const PsSharding& shards, const PsConfig& cfg) {
  Compute& compute = ctx.compute;
  const std::string who = cfg.sync ? "ps_sync worker" : "ps_async worker";
  const bool reports = ctx.comm.rank() == 0;
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);
  std::vector<Vec> out, in;  // by active server: my push, its pull
  for (const int s : shards.active()) {
    out.emplace_back(shards.floats(s), compute.real());
    in.emplace_back(shards.floats(s), compute.real());
  }
  if (reports && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);
  std::vector<Request> pulls, pushes;
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const float loss = compute.forward_backward(params, grads);  // 1. my gradient
    for (std::size_t i = 0; i < out.size(); ++i) {
      const int s = shards.active()[i];
      pulls.push_back(ctx.comm.irecv(s, tags::kPsPull, in[i]));
      shards.gather(s, grads, out[i]);
      pushes.push_back(ctx.comm.isend(s, tags::kPsPush, out[i], kBorrowed));  // 2. push each server its pieces
    }
    wait_all(pulls, who);  // 3. pull them back, updated
    wait_all(pushes, who);
    for (std::size_t i = 0; i < in.size(); ++i) shards.scatter(shards.active()[i], in[i], params);
    ctx.recorder.step(step + 1, loss);
    const bool last = step + 1 == ctx.steps;
    // ps_async's workers hold pulls of different ages (ps_sync's all hold the servers' model).
    if (!cfg.sync && (last || ctx.recorder.eval_due(step + 1))) ctx.recorder.observe(step + 1, params);
    if (reports && (last ? cfg.sync : ctx.recorder.eval_due(step + 1))) {
      ctx.recorder.evaluate(step + 1, params, last);  // ps_sync: the servers' model; ps_async: my last pull
    }
  }
  if (!cfg.sync && reports) {  // ps_async: the servers' final pieces
    for (std::size_t i = 0; i < in.size(); ++i)
      pulls.push_back(ctx.comm.irecv(shards.active()[i], tags::kPsFinal, in[i]));
    wait_all(pulls, who);
    for (std::size_t i = 0; i < in.size(); ++i) shards.scatter(shards.active()[i], in[i], params);
    ctx.recorder.evaluate(ctx.steps, params, true);
  }
}

RankMain configure(ConfigReader& r, bool sync) {
  PsConfig cfg;
  cfg.sync = sync;
  cfg.bigarray_bound = static_cast<std::size_t>(r.integer("bigarray_bound", 1'000'000, 1, 1'000'000'000'000));
  if (sync) cfg.average = r.boolean("average_gradients", true);
  return [cfg](Context& ctx) {
    const PsSharding shards(ctx.compute.param_blocks(), ctx.compute.num_params(), ctx.workers, cfg.bigarray_bound);
    // Both halves are activities that the rank joins, so that what they share (this frame, the rank's Comm and
    // Compute) outlives them both: on the simulator a failed rank's worker ends at its next message while its
    // server may still be waiting for one.
    const std::string rank = std::to_string(ctx.comm.rank());
    const std::unique_ptr<Activity> srv = ctx.node.spawn("ps-server-" + rank, [&] { server(ctx, shards, cfg); });
    const std::unique_ptr<Activity> wrk = ctx.node.spawn("ps-worker-" + rank, [&] { worker(ctx, shards, cfg); });
    wrk->join();
    srv->join();
  };
}

}  // namespace

AlgorithmSpec ps_sync_spec() {
  return {"ps_sync", "MXNet-style synchronous parameter server: a server per worker, keys sharded as MXNet's kvstore",
          [](int workers) { return workers; }, [](ConfigReader& r, int) { return configure(r, true); }};
}

AlgorithmSpec ps_async_spec() {
  return {"ps_async", "MXNet-style asynchronous parameter server: each push applied on arrival, then pulled",
          [](int workers) { return workers; }, [](ConfigReader& r, int) { return configure(r, false); }};
}

}  // namespace dts
