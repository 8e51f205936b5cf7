// The MXNet-style parameter server (papers/bidmach.md §9.1; MXNet's kvstore "dist_sync" and "dist_async"
// with update_on_kvstore), the baseline of the BIDMach and MPCA experiments. With `servers: colocated` (the
// default, MXNet's launcher on n hosts) every rank is a worker and, beside it, a server: two activities
// (Node::spawn) sharing its Comm (distinct tags) and Compute (the worker trains; the server alone uses the
// optimizer and its state); with `servers: dedicated` ranks 0..n-1 are servers on machines of their own and
// ranks n..2n-1 the workers. The model's parameter blocks are the keys, spread
// over the servers as MXNet's kvstore does (algorithms/ps_sharding.hpp). As MXNet's dependency engine runs it,
// a worker pushes each layer's pieces of its gradient as soon as back-propagation has produced them (the last
// layer first), one message per key and server, and pulls each piece's new value back; it starts its next step
// once it has all of them.
//   ps_sync   a server sums a piece once every worker's push of it is in (in worker order; averaged by default:
//             MXNet's rescale_grad of 1 / (batch x workers) in dist_sync), applies the experiment's optimizer to
//             it and answers every worker's pull of it; pieces complete one by one, with no barrier across
//             keys: synchronous SGD on the averaged gradient, the same on every backend.
//   ps_async  a server applies each push of a piece alone as it arrives, first come first served, and answers
//             that worker's pull with the piece as it is then; once every worker has pushed its last step the
//             servers send their pieces to rank 0, whose model is the run's result.
// The optimizer's state lives on the server that owns a piece (Compute::optimizer_step_range at the piece's
// offset). The learning-rate schedule's iteration of a piece is the number of updates it has had: the round
// in ps_sync (as a worker's step), its count of pushes in ps_async (MXNet's per-key update count). A failed
// rank takes its server with it: a worker that needs its keys, or a ps_sync server that waits for its push,
// stops the run (PeerFailed); a ps_async server drops a failed worker and serves the others, so a ps_async run
// survives a rank whose server holds no key. The ps_async result's gather to rank 0 is part of the run's
// simulated time (one model's worth of bytes into rank 0 after the last step).
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/ps_sharding.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "kernels/model/grad_layers.hpp"

namespace dts {
namespace {

constexpr SendOptions kBorrowed{.modeled_bytes = std::nullopt, .borrow = true};

struct PsConfig {
  bool sync = true;
  bool dedicated = false;  // servers on ranks 0..P-1, machines of their own; workers on ranks P..2P-1
  Rank first_worker(int workers) const { return dedicated ? workers : 0; }
  std::size_t bigarray_bound = 1'000'000;
  bool average = true;  // ps_sync: average the pushes (else sum them)
};

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

// A server's pieces in the order the workers push them, each with its place in the server's packed model
// (PsSharding::gather's order).
struct ServerPiece {
  PsPiece piece;
  std::size_t at = 0;
};
std::vector<ServerPiece> server_pieces(const PsSharding& shards, int s) {
  std::vector<ServerPiece> out;
  for (const PsPiece& p : shards.push_order(s)) {
    std::size_t at = 0;
    for (const PsPiece& q : shards.of(s)) {
      if (q.offset == p.offset) break;
      at += q.count;
    }
    out.push_back({p, at});
  }
  return out;
}

void sync_server(Context& ctx, const PsSharding& shards, const PsConfig& cfg, Slice model) {
  Compute& compute = ctx.compute;
  const int P = ctx.workers;
  const std::vector<ServerPiece> order = server_pieces(shards, ctx.comm.rank());
  std::vector<Vec> pushed;
  const Rank first = cfg.first_worker(P);
  for (int w = 0; w < P; ++w) pushed.emplace_back(model.count, compute.real());
  const auto slot = [&](int w, std::size_t i) { return pushed[std::size_t(w)].sub(order[i].at, order[i].piece.count); };
  std::vector<Request> rx(static_cast<std::size_t>(P)), replies;
  for (std::int64_t round = 0; round < ctx.steps; ++round) {
    std::vector<std::size_t> next(static_cast<std::size_t>(P), 0), arrived(order.size(), 0);
    for (int w = 0; w < P; ++w) rx[std::size_t(w)] = ctx.comm.irecv(first + w, tags::kPsPush, slot(w, 0));
    for (std::size_t done = 0; done < order.size();) {
      const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. a worker's push of its next piece
      require_ok(got.status, got.source, "ps_sync server");
      const auto w = static_cast<int>(got.index);
      const std::size_t i = next[got.index]++;
      if (next[got.index] < order.size()) {
        rx[got.index] = ctx.comm.irecv(first + w, tags::kPsPush, slot(w, next[got.index]));
      }
      if (++arrived[i] < static_cast<std::size_t>(P)) continue;
      const ServerPiece& sp = order[i];  // every worker's push of piece i is in
      Slice sum = slot(0, i);
      for (int v = 1; v < P; ++v) rules::axpy(sum, 1.0f, slot(v, i));  // 2. in worker order
      if (P > 1) compute.charge_reduce(sp.piece.count * static_cast<std::size_t>(P - 1), 3);
      if (cfg.average && P > 1) {
        rules::scale(sum, 1.0f / static_cast<float>(P));
        compute.charge_reduce(sp.piece.count, 2);
      }
      Slice value = model.sub(sp.at, sp.piece.count);
      compute.optimizer_step_range(value, sum, sp.piece.offset, round);  // 3. the optimizer on the piece
      reap(replies, "ps_sync server");
      for (Rank v = 0; v < P; ++v) replies.push_back(ctx.comm.isend(first + v, tags::kPsPull, value));  // 4. its pulls
      ++done;
    }
  }
  wait_all(replies, "ps_sync server");
}

void async_server(Context& ctx, const PsSharding& shards, const PsConfig& cfg, Slice model) {
  Compute& compute = ctx.compute;
  const int P = ctx.workers;
  const Rank first = cfg.first_worker(P);
  const std::vector<ServerPiece> order = server_pieces(shards, ctx.comm.rank());
  std::vector<Vec> incoming;
  for (int w = 0; w < P; ++w) incoming.emplace_back(model.count, compute.real());
  const auto slot = [&](int w, std::size_t i) {
    return incoming[std::size_t(w)].sub(order[i].at, order[i].piece.count);
  };
  std::vector<std::size_t> next(static_cast<std::size_t>(P), 0);           // by worker: its next piece this step
  std::vector<std::int64_t> left(static_cast<std::size_t>(P), ctx.steps);  // by worker: its steps still to push
  std::vector<std::int64_t> updates(order.size(), 0);                      // by piece: the updates it has had
  std::int64_t remaining = P * ctx.steps * static_cast<std::int64_t>(order.size());
  std::vector<Request> rx(static_cast<std::size_t>(P)), replies;
  for (int w = 0; w < P; ++w) rx[std::size_t(w)] = ctx.comm.irecv(first + w, tags::kPsPush, slot(w, 0));
  while (remaining > 0) {
    const Comm::Completion got = ctx.comm.wait_any(rx);  // 1. the first push to arrive
    const auto w = static_cast<int>(got.index);
    auto& step_pieces = next[got.index];
    if (got.status == Status::kPeerFailed) {  // a failed worker: serve the others (its own server's keys stop them)
      remaining -= left[got.index] * static_cast<std::int64_t>(order.size()) - static_cast<std::int64_t>(step_pieces);
      left[got.index] = 0;
      continue;
    }
    require_ok(got.status, got.source, "ps_async server");
    const std::size_t i = step_pieces++;
    const ServerPiece& sp = order[i];
    Slice value = model.sub(sp.at, sp.piece.count);
    compute.optimizer_step_range(value, slot(w, i), sp.piece.offset, updates[i]++);  // 2. applied alone
    --remaining;
    reap(replies, "ps_async server", true);
    replies.push_back(ctx.comm.isend(first + w, tags::kPsPull, value));  // 3. its pull: the piece as it is now
    if (step_pieces == order.size()) {
      step_pieces = 0;
      --left[got.index];
    }
    if (left[got.index] > 0) rx[got.index] = ctx.comm.irecv(first + w, tags::kPsPush, slot(w, step_pieces));
  }
  wait_all(replies, "ps_async server", true);
  ctx.comm.send(first, tags::kPsFinal, model);  // the result, to the first worker
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
    async_server(ctx, shards, cfg, model);
  }
}

void worker(Context& ctx, const PsSharding& shards, const PsConfig& cfg) {
  Compute& compute = ctx.compute;
  const std::string who = cfg.sync ? "ps_sync worker" : "ps_async worker";
  const bool reports = ctx.comm.rank() == cfg.first_worker(ctx.workers);
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);
  if (reports && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);
  std::vector<Request> pulls, pushes;
  // 1-2. As back-propagation produces layer l's gradient: push each of its pieces to its server, and expect the
  // piece's new value back (straight into params: the step's kernels have read them already).
  const auto push_layer = [&](std::size_t l) {
    for (const PsPiece& p : shards.of_layer(l)) {
      pulls.push_back(ctx.comm.irecv(p.server, tags::kPsPull, params.sub(p.offset, p.count)));
      pushes.push_back(ctx.comm.isend(p.server, tags::kPsPush, grads.sub(p.offset, p.count), kBorrowed));
    }
  };
  const bool by_layer = !model::grad_layers(compute.param_blocks()).empty();
  Compute::StepHooks hooks;
  if (by_layer) hooks.layer_ready = push_layer;
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const float loss = compute.forward_backward_hooked(params, grads, hooks);
    if (!by_layer) push_layer(0);  // a model without layers: one key, pushed whole
    wait_all(pulls, who);          // 3. every piece back, updated, before the next forward
    wait_all(pushes, who);
    ctx.recorder.step(step + 1, loss);
    const bool last = step + 1 == ctx.steps;
    // ps_async's workers hold pulls of different ages (ps_sync's all hold the servers' model).
    if (!cfg.sync && (last || ctx.recorder.eval_due(step + 1))) ctx.recorder.observe(step + 1, params);
    if (reports && (last ? cfg.sync : ctx.recorder.eval_due(step + 1))) {
      ctx.recorder.evaluate(step + 1, params, last);  // ps_sync: the servers' model; ps_async: my last pull
    }
  }
  if (!cfg.sync && reports) {  // ps_async: the servers' final pieces
    std::vector<Vec> in;
    in.reserve(shards.active().size());
    for (const int s : shards.active()) {
      in.emplace_back(shards.floats(s), compute.real());
      pulls.push_back(ctx.comm.irecv(s, tags::kPsFinal, in.back()));
    }
    wait_all(pulls, who);
    for (std::size_t i = 0; i < in.size(); ++i) shards.scatter(shards.active()[i], in[i], params);
    ctx.recorder.evaluate(ctx.steps, params, true);
  }
}

// servers: "colocated" (MXNet's launcher on n hosts: a server beside each worker) or "dedicated" (n more machines,
// one server each: a worker's NIC carries its pushes and pulls only).
bool dedicated(ConfigReader& r) {
  const std::string servers = r.string("servers", "colocated");
  if (servers != "colocated" && servers != "dedicated") r.fail("servers", "expected \"colocated\" or \"dedicated\"");
  return servers == "dedicated";
}

RankMain configure(ConfigReader& r, bool sync) {
  PsConfig cfg;
  cfg.sync = sync;
  cfg.dedicated = dedicated(r);
  cfg.bigarray_bound = static_cast<std::size_t>(r.integer("bigarray_bound", 1'000'000, 1, 1'000'000'000'000));
  if (sync) cfg.average = r.boolean("average_gradients", true);
  return [cfg](Context& ctx) {
    const PsSharding shards(ctx.compute.param_blocks(), ctx.compute.num_params(), ctx.workers, cfg.bigarray_bound);
    const Rank me = ctx.comm.rank();
    if (cfg.dedicated) {  // a machine of one role
      me < cfg.first_worker(ctx.workers) ? server(ctx, shards, cfg) : worker(ctx, shards, cfg);
      return;
    }
    // Both halves are activities that the rank joins, so that what they share (this frame, the rank's Comm and
    // Compute) outlives them both: on the simulator a failed rank's worker ends at its next message while its
    // server may still be waiting for one.
    const std::string rank = std::to_string(me);
    const std::unique_ptr<Activity> srv = ctx.node.spawn("ps-server-" + rank, [&] { server(ctx, shards, cfg); });
    const std::unique_ptr<Activity> wrk = ctx.node.spawn("ps-worker-" + rank, [&] { worker(ctx, shards, cfg); });
    wrk->join();
    srv->join();
  };
}

int ranks(ConfigReader& r, int workers) { return dedicated(r) ? 2 * workers : workers; }

}  // namespace

AlgorithmSpec ps_sync_spec() {
  return {"ps_sync", "MXNet-style synchronous parameter server: a server per worker, keys sharded as MXNet's kvstore",
          ranks, [](ConfigReader& r, int) { return configure(r, true); }};
}

AlgorithmSpec ps_async_spec() {
  return {"ps_async", "MXNet-style asynchronous parameter server: each push applied on arrival, then pulled", ranks,
          [](ConfigReader& r, int) { return configure(r, false); }};
}

}  // namespace dts
