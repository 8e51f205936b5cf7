// Gossiping SGD (Jin, Yuan, Iandola & Keutzer 2016, "How to scale distributed deep learning?", Algorithm 2,
// synchronous form): every worker keeps its own model; each step it takes a local SGD step, then exchanges
// its model with one random peer and both replace theirs by the pair's average. Peers are drawn from a seeded
// random perfect matching of the workers, the same on every rank (with an odd count one worker sits the step
// out), so every exchange is symmetric: an exchange moves no mass, the average of the models is conserved,
// and on a quadratic the average follows centralized gradient descent exactly while the models mix.
// The reported model is the average of the workers' models (a tree allreduce after the last step).
#include "algorithms/gossip_sgd.hpp"

#include <map>
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "kernels/rng.hpp"

namespace dts {

std::vector<Rank> gossip_peers(int P, std::uint64_t seed, std::int64_t step) {
  std::vector<Rank> order(static_cast<std::size_t>(P));
  for (int i = 0; i < P; ++i) order[static_cast<std::size_t>(i)] = i;
  Rng rng(seed, static_cast<std::uint64_t>(step), "gossip_peers");
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);  // Fisher-Yates
  std::vector<Rank> peer(static_cast<std::size_t>(P), -1);
  for (std::size_t k = 0; k + 1 < order.size(); k += 2) {
    peer[static_cast<std::size_t>(order[k])] = order[k + 1];
    peer[static_cast<std::size_t>(order[k + 1])] = order[k];
  }
  return peer;
}

namespace {

constexpr Tag kTagGossip = tags::kGossip;
constexpr Tag kTagAverage = tags::kGossipAverage;

struct GossipSgdConfig {
  std::uint64_t peer_seed = 1;
};

// The matchings of the last few steps, shared by the ranks of one process (every rank of a simulation), so
// that P ranks do not each draw the same O(P) matching. Ranks drift apart by a few steps at most.
class PeerCache {
 public:
  const std::vector<Rank>& peers(int P, std::uint64_t seed, std::int64_t step) {
    auto it = by_step_.find(step);
    if (it == by_step_.end()) {
      it = by_step_.emplace(step, gossip_peers(P, seed, step)).first;
      while (by_step_.begin()->first < step - kKeep) by_step_.erase(by_step_.begin());
    }
    return it->second;
  }

 private:
  static constexpr std::int64_t kKeep = 16;
  std::map<std::int64_t, std::vector<Rank>> by_step_;
};

void gossip_sgd_rank(Context& ctx, const GossipSgdConfig& cfg, PeerCache& cache) {
  Compute& compute = ctx.compute;
  const int P = ctx.comm.size();
  const Rank me = ctx.comm.rank();
  Vec params = compute.make_vec(), grads = compute.make_vec(), theirs = compute.make_vec();
  compute.init_params(params);
  if (me == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const float loss = compute.forward_backward(params, grads);  // 1. local gradient
    compute.optimizer_step(params, grads);                       // 2. local step
    const Rank peer = cache.peers(P, cfg.peer_seed, step)[static_cast<std::size_t>(me)];
    if (peer >= 0) {  // 3. exchange with the peer
      collectives::pairwise_exchange(ctx.comm, peer, params, theirs, kTagGossip);
      rules::axpy(params, 1.0f, theirs);  // 4. x <- (x + x_peer) / 2
      rules::scale(params, 0.5f);
      compute.charge_elementwise(params.count(), 3);
    }
    ctx.recorder.step(step + 1, loss);
    const bool last = step + 1 == ctx.steps;
    if (last || ctx.recorder.eval_due(step + 1)) ctx.recorder.observe(step + 1, params);  // the replicas' mean
    if (me == 0 && !last && ctx.recorder.eval_due(step + 1)) {
      ctx.recorder.evaluate(step + 1, params);  // rank 0's own model between the ends
    }
  }
  // 5. The reported model: the average over the workers.
  collectives::tree_allreduce(ctx.comm, compute, Group::range(0, P), params, kTagAverage);
  rules::scale(params, 1.0f / static_cast<float>(P));
  if (me == 0) ctx.recorder.evaluate(ctx.steps, params, true);
}

}  // namespace

AlgorithmSpec gossip_sgd_spec() {
  return {"gossip_sgd", "Gossiping SGD: local steps, then pairwise model averaging with a seeded random peer",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int /*workers*/) -> RankMain {
            GossipSgdConfig cfg;
            cfg.peer_seed = static_cast<std::uint64_t>(r.integer("peer_seed", 1, 0, std::int64_t{1} << 62));
            auto cache = std::make_shared<PeerCache>();
            return [cfg, cache](Context& ctx) { gossip_sgd_rank(ctx, cfg, *cache); };
          }};
}

}  // namespace dts
