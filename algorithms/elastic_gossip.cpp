// Elastic Gossip and Gossiping SGD, pull and push (Pramod 2018, Algorithms 4-6; papers/elastic_gossip.md
// §4.3-4.7 and §5): every worker keeps its own model and takes its own optimizer steps (the experiment's
// optimizer: Nesterov in the thesis, PyTorch semantics); at the updates where it communicates
// (algorithms/gossip_choice.hpp) a correction computed from the PRE-step models is subtracted after the step,
// as the thesis's code: backward -> correction -> optimizer step -> subtract the correction.
//   elastic_gossip  symmetric: alpha * sum_{k in K_i} (x_i - x_k) over the SET K_i = {own choice} u {workers
//                   that chose i}; conserves the mean of the models. `cap_alpha` caps alpha |K_i| at 1 (the
//                   effective alpha is 1 / |K_i| then) and counts the updates where it did
//                   (summary.json counters.cap_alpha_triggered).
//   gossip_pull     the requester alone moves: (x_i - x_k) / 2 toward its choice k, who only sends.
//   gossip_push     every worker pushes to its choice; a worker that received replaces its model by the mean of
//                   its own and the pushed ones.
// Synchronisation (`sync`, algorithms/gossip_family.hpp): global and shared exchange in every pair at once
// (isend/irecv to every partner, then the sums in rank order). async: elastic_gossip and gossip_pull are
// request/reply rendezvous served at the peer's step boundaries (elastic: the request carries the model and
// the peer moves as it answers; pull: a one-float request), gossip_push is one-way, applied at the receiver's
// step boundaries after its step. In async a mutual choice makes two exchanges, and there is no cap to apply
// (every exchange is one pair).
// The final model is the workers' average; rank 0's own model is evaluated beside it.
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/gossip_family.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

enum class Rule { kElastic, kPull, kPush };

struct PairwiseConfig {
  Rule rule = Rule::kElastic;
  GossipKeys keys;
  float alpha = 0.5f;
  bool cap_alpha = false;
};

// A Vec per partner, grown as needed.
Vec& buffer(std::vector<Vec>& bufs, std::size_t i, const Compute& compute) {
  while (bufs.size() <= i) bufs.push_back(compute.make_vec());
  return bufs[i];
}

void sync_rank(Context& ctx, const PairwiseConfig& cfg, const std::shared_ptr<GossipChoiceCache>& cache) {
  Compute& compute = ctx.compute;
  const Rank me = ctx.comm.rank();
  const std::size_t n = compute.num_params();
  Vec params = compute.make_vec(), grads = compute.make_vec(), delta = compute.make_vec();
  std::vector<Vec> theirs;
  compute.init_params(params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);
  GossipControl control(ctx, cfg.keys, cache);
  std::int64_t capped = 0, initiated = 0;

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const std::int64_t update = step + 1;
    const float loss = compute.forward_backward(params, grads);
    const Choices held = control.choices(update);
    const std::vector<Rank>& choices = *held;
    const Rank own = choices[static_cast<std::size_t>(me)];
    initiated += own >= 0 ? 1 : 0;
    std::vector<Rank> send_to, recv_from;
    switch (cfg.rule) {
      case Rule::kElastic:
        send_to = recv_from = gossip_partners(choices, me);
        break;
      case Rule::kPull:
        send_to = gossip_choosers(choices, me);
        if (own >= 0) recv_from = {own};
        break;
      case Rule::kPush:
        if (own >= 0) send_to = {own};
        recv_from = gossip_choosers(choices, me);
        break;
    }
    std::vector<Request> reqs;
    for (std::size_t k = 0; k < recv_from.size(); ++k) {
      reqs.push_back(ctx.comm.irecv(recv_from[k], tags::kGossipModel, buffer(theirs, k, compute)));
    }
    SendOptions borrow;
    borrow.borrow = true;  // waited below, before the step touches params
    for (const Rank k : send_to) reqs.push_back(ctx.comm.isend(k, tags::kGossipModel, params, borrow));
    for (auto& r : reqs) r.wait_ok();

    // The correction, from the pre-step models (sums in rank order: the same bits on every backend).
    const auto m = recv_from.size();
    const bool correct = m > 0;
    if (correct) {
      if (cfg.rule == Rule::kElastic) {  // alpha (|K| x_i - sum_k x_k)
        float a = cfg.alpha;
        if (cfg.cap_alpha && a * static_cast<float>(m) > 1.0f) {
          a = 1.0f / static_cast<float>(m);
          ++capped;
        }
        rules::copy(delta, params);
        rules::scale(delta, static_cast<float>(m));
        for (std::size_t k = 0; k < m; ++k) rules::axpy(delta, -1.0f, theirs[k]);
        rules::scale(delta, a);
      } else if (cfg.rule == Rule::kPull) {  // (x_i - x_k) / 2
        rules::elastic_diff(delta, params, theirs[0], 0.5f);
      } else {  // x_i - (x_i + sum_s x_s) / (1 + m)
        rules::copy(delta, params);
        for (std::size_t k = 0; k < m; ++k) rules::axpy(delta, 1.0f, theirs[k]);
        rules::scale(delta, -1.0f / static_cast<float>(m + 1));
        rules::axpy(delta, 1.0f, params);
      }
      compute.charge_elementwise(n, static_cast<int>(2 * m + 2));
    }
    compute.optimizer_step(params, grads);
    if (correct) {
      rules::axpy(params, -1.0f, delta);
      compute.charge_elementwise(n, 3);
    }
    ctx.recorder.step(update, loss);
    gossip_observe(ctx, update, params);
    if (me == 0 && update < ctx.steps && ctx.recorder.eval_due(update)) ctx.recorder.evaluate(update, params);
  }
  ctx.recorder.count("gossip_initiations", initiated);
  if (cfg.cap_alpha) ctx.recorder.count("cap_alpha_triggered", capped);
  gossip_finish(ctx, params);
}

// Replies that have not completed yet; completed ones are dropped at each call.
void keep(std::vector<Request>& replies, Request r) {
  std::erase_if(replies, [](Request& q) { return q.test(); });
  replies.push_back(std::move(r));
}

void async_rendezvous_rank(Context& ctx, const PairwiseConfig& cfg) {
  Compute& compute = ctx.compute;
  const Rank me = ctx.comm.rank();
  const int W = ctx.comm.size();
  const std::size_t n = compute.num_params();
  const bool elastic = cfg.rule == Rule::kElastic;
  Vec params = compute.make_vec(), grads = compute.make_vec(), delta = compute.make_vec();
  Vec theirs = compute.make_vec(), sent = elastic ? compute.make_vec() : Vec(), scratch = compute.make_vec();
  Vec ask(1, true);
  std::vector<Request> replies;
  compute.init_params(params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  // The peer's side: answer with the own model; elastic: then move toward the requester's.
  GossipServer server(ctx, elastic ? compute.make_vec() : Vec(1, true), [&](Rank src, ConstSlice request) {
    keep(replies, ctx.comm.isend(src, tags::kGossipReply, params));
    if (elastic) {
      rules::elastic_diff(scratch, params, request, cfg.alpha);
      rules::axpy(params, -1.0f, scratch);
      compute.charge_elementwise(n, 5);
    }
  });
  std::int64_t initiated = 0;
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const std::int64_t update = step + 1;
    const float loss = compute.forward_backward(params, grads);
    const Rank own = gossip_choice(cfg.keys.schedule, W, me, update);
    if (own >= 0) {
      ++initiated;
      Request out;
      if (elastic) {
        rules::copy(sent, params);  // the model the peer moves toward; the correction's own side
        out = ctx.comm.isend(own, tags::kGossipRequest, params);
      } else {
        out = ctx.comm.isend(own, tags::kGossipRequest, ask);
      }
      Request reply = ctx.comm.irecv(own, tags::kGossipReply, theirs);
      server.wait_serving(reply);
      out.wait_ok();
      rules::elastic_diff(delta, elastic ? ConstSlice(sent) : ConstSlice(params), theirs, elastic ? cfg.alpha : 0.5f);
      compute.charge_elementwise(n, 3);
    }
    compute.optimizer_step(params, grads);
    if (own >= 0) {
      rules::axpy(params, -1.0f, delta);
      compute.charge_elementwise(n, 3);
    }
    server.poll();  // the step boundary: serve what has arrived
    ctx.recorder.step(update, loss);
    gossip_observe(ctx, update, params);
    if (me == 0 && update < ctx.steps && ctx.recorder.eval_due(update)) ctx.recorder.evaluate(update, params);
  }
  server.finish();
  for (auto& r : replies) r.wait_ok();
  ctx.recorder.count("gossip_initiations", initiated);
  gossip_finish(ctx, params);
}

void async_push_rank(Context& ctx, const PairwiseConfig& cfg) {
  Compute& compute = ctx.compute;
  const Rank me = ctx.comm.rank();
  const int W = ctx.comm.size();
  const std::size_t n = compute.num_params();
  Vec params = compute.make_vec(), grads = compute.make_vec(), sum = compute.make_vec();
  std::vector<Request> pushes;
  std::vector<float> sent_to(static_cast<std::size_t>(W), 0.0f);
  std::int64_t received = 0, initiated = 0;
  compute.init_params(params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);
  GossipInbox inbox(ctx, tags::kGossipModel, compute.make_vec());
  const auto collect = [&](Rank, ConstSlice x) {
    if (received++ == 0) {
      rules::copy(sum, x);
    } else {
      rules::axpy(sum, 1.0f, x);
    }
    compute.charge_elementwise(n, 3);
  };
  const auto apply = [&] {  // x <- (x + sum of the pushed) / (1 + count)
    if (received == 0) return;
    rules::axpy(params, 1.0f, sum);
    rules::scale(params, 1.0f / static_cast<float>(received + 1));
    compute.charge_elementwise(n, 3);
    received = 0;
  };
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const std::int64_t update = step + 1;
    const float loss = compute.forward_backward(params, grads);
    const Rank own = gossip_choice(cfg.keys.schedule, W, me, update);
    if (own >= 0) {
      ++initiated;
      sent_to[static_cast<std::size_t>(own)] += 1.0f;
      keep(pushes, ctx.comm.isend(own, tags::kGossipModel, params));
    }
    compute.optimizer_step(params, grads);
    inbox.poll(collect);  // the step boundary
    apply();
    ctx.recorder.step(update, loss);
    gossip_observe(ctx, update, params);
    if (me == 0 && update < ctx.steps && ctx.recorder.eval_due(update)) ctx.recorder.evaluate(update, params);
  }
  inbox.finish(sent_to, collect);
  apply();
  for (auto& r : pushes) r.wait_ok();
  ctx.recorder.count("gossip_initiations", initiated);
  gossip_finish(ctx, params);
}

AlgorithmSpec pairwise_spec(const char* name, const char* summary, Rule rule) {
  return {name, summary, [](ConfigReader&, int workers) { return workers; },
          [rule](ConfigReader& r, int /*workers*/) -> RankMain {
            PairwiseConfig cfg;
            cfg.rule = rule;
            cfg.keys = read_gossip_keys(r);
            if (rule == Rule::kElastic) {
              cfg.alpha = static_cast<float>(r.number("alpha", 0.5, 1e-9, 1.0));
              cfg.cap_alpha = r.boolean("cap_alpha", false);
              if (cfg.cap_alpha && cfg.keys.sync == GossipSync::kAsync) {
                r.fail("cap_alpha", "has no effect with sync \"async\" (every exchange there is one pair)");
              }
            }
            if (cfg.keys.sync != GossipSync::kAsync) {
              auto cache = std::make_shared<GossipChoiceCache>(cfg.keys.schedule);
              return [cfg, cache](Context& ctx) { sync_rank(ctx, cfg, cache); };
            }
            if (rule == Rule::kPush) return [cfg](Context& ctx) { async_push_rank(ctx, cfg); };
            return [cfg](Context& ctx) { async_rendezvous_rank(ctx, cfg); };
          }};
}

}  // namespace

AlgorithmSpec elastic_gossip_spec() {
  return pairwise_spec("elastic_gossip",
                       "Elastic Gossip: local steps; a symmetric elastic move by alpha toward every partner of the "
                       "update (own random choice and those that chose it), with probability p every tau steps",
                       Rule::kElastic);
}
AlgorithmSpec gossip_pull_spec() {
  return pairwise_spec("gossip_pull", "pull Gossiping SGD: the requester alone moves halfway to a random peer",
                       Rule::kPull);
}
AlgorithmSpec gossip_push_spec() {
  return pairwise_spec("gossip_push",
                       "push Gossiping SGD: a worker averages its model with those pushed to it by random peers",
                       Rule::kPush);
}

}  // namespace dts
