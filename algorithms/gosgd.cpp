// GoSGD (Blot, Picard, Cord & Thome 2016; papers/elastic_gossip.md §4.4): push-sum gossip. Worker i keeps its
// model x_i and a weight w_i, 1 / W at the start. Every update: a local optimizer step; then, when it
// communicates (algorithms/gossip_choice.hpp), it halves w_i and sends (x_i, w_i) to its choice j, which
// mixes x_j <- (w_j x_j + w_s x_s) / (w_j + w_s) and takes w_j += w_s. The weights always sum to one and
// sum_i w_i x_i is what the exchanges conserve; the final model is that sum (a tree allreduce of w_i x_i).
// The weight travels as a one-float message (tag kGosgdWeight) just before the model.
// Synchronisation (`sync`, algorithms/gossip_family.hpp): global and shared mix every message of the update
// at once, in the senders' rank order: x_j <- (w_j x_j + sum_s w_s x_s) / (w_j + sum_s w_s). async: one-way,
// the receiver mixes what has arrived at its step boundaries, in the order of arrival.
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/gossip_family.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

struct GosgdConfig {
  GossipKeys keys;
};

// x <- (w x + ws xs) / (w + ws), w <- w + ws; returns the new weight.
float mix(Slice x, float w, ConstSlice xs, float ws, Compute& compute) {
  const float total = w + ws;
  rules::scale(x, w / total);
  rules::axpy(x, ws / total, xs);
  compute.charge_elementwise(x.count, 3);
  return total;
}

void gosgd_rank(Context& ctx, const GosgdConfig& cfg, const std::shared_ptr<GossipChoiceCache>& cache) {
  Compute& compute = ctx.compute;
  const Rank me = ctx.comm.rank();
  const int W = ctx.comm.size();
  const bool async = cfg.keys.sync == GossipSync::kAsync;
  Vec params = compute.make_vec(), grads = compute.make_vec();
  std::vector<Vec> theirs;
  std::vector<Vec> their_w;
  Vec my_w(1, true);
  float w = 1.0f / static_cast<float>(W);
  compute.init_params(params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  std::optional<GossipControl> control;
  std::optional<GossipInbox> inbox;
  Vec in_w(1, true);
  if (async) {
    inbox.emplace(ctx, tags::kGossipModel, compute.make_vec());
  } else {
    control.emplace(ctx, cfg.keys, cache);
  }
  // Async: the weight of a model that arrived, then the mix.
  const auto mix_arrived = [&](Rank src, ConstSlice x) {
    ctx.comm.irecv(src, tags::kGosgdWeight, in_w).wait_ok();  // sent just before the model
    w = mix(params, w, x, in_w.data()[0], compute);
  };
  std::vector<Request> sends;
  std::vector<float> sent_to(static_cast<std::size_t>(W), 0.0f);
  std::int64_t initiated = 0;

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const std::int64_t update = step + 1;
    const float loss = compute.forward_backward(params, grads);
    compute.optimizer_step(params, grads);
    const Choices choices = async ? nullptr : control->choices(update);
    const Rank own = async ? gossip_choice(cfg.keys.schedule, W, me, update) : (*choices)[static_cast<std::size_t>(me)];
    if (own >= 0) {
      ++initiated;
      w *= 0.5f;
      my_w.data()[0] = w;
      sent_to[static_cast<std::size_t>(own)] += 1.0f;
      sends.push_back(ctx.comm.isend(own, tags::kGosgdWeight, my_w));
      sends.push_back(ctx.comm.isend(own, tags::kGossipModel, params));
    }
    if (async) {
      inbox->poll(mix_arrived);
      std::erase_if(sends, [](Request& r) { return r.test(); });
    } else {
      const std::vector<Rank> from = gossip_choosers(*choices, me);
      std::vector<Request> recvs;
      for (std::size_t k = 0; k < from.size(); ++k) {
        while (theirs.size() <= k) {
          theirs.push_back(compute.make_vec());
          their_w.emplace_back(1, true);
        }
        recvs.push_back(ctx.comm.irecv(from[k], tags::kGosgdWeight, their_w[k]));
        recvs.push_back(ctx.comm.irecv(from[k], tags::kGossipModel, theirs[k]));
      }
      for (auto& r : recvs) r.wait_ok();
      for (auto& r : sends) r.wait_ok();
      sends.clear();
      if (!from.empty()) {  // (w x + sum_s w_s x_s) / (w + sum_s w_s), in the senders' rank order
        float total = w;
        for (std::size_t k = 0; k < from.size(); ++k) total += their_w[k].data()[0];
        rules::scale(params, w / total);
        for (std::size_t k = 0; k < from.size(); ++k) rules::axpy(params, their_w[k].data()[0] / total, theirs[k]);
        compute.charge_elementwise(params.count(), static_cast<int>(2 * from.size() + 2));
        w = total;
      }
    }
    ctx.recorder.step(update, loss);
    gossip_observe(ctx, update, params);
    if (me == 0 && update < ctx.steps && ctx.recorder.eval_due(update)) ctx.recorder.evaluate(update, params);
  }
  if (async) inbox->finish(sent_to, mix_arrived);
  for (auto& r : sends) r.wait_ok();
  ctx.recorder.count("gossip_initiations", initiated);
  gossip_finish(ctx, params, w);
}

}  // namespace

AlgorithmSpec gosgd_spec() {
  return {"gosgd", "GoSGD: local steps; push-sum gossip of (model, weight) to a random peer with probability p",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            GosgdConfig cfg;
            cfg.keys = read_gossip_keys(r);
            auto cache = std::make_shared<GossipChoiceCache>(cfg.keys.schedule);
            return [cfg, cache](Context& ctx) { gosgd_rank(ctx, cfg, cache); };
          }};
}

}  // namespace dts
