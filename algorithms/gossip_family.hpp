// What the gossip family (Elastic Gossip, pull and push Gossiping SGD, GoSGD, the no-communication baseline;
// papers/elastic_gossip.md) shares: the keys of "who communicates with whom" (algorithms/gossip_choice.hpp),
// how a worker learns every worker's choice in the synchronous modes, the one-way inbox and the rendezvous
// server of the asynchronous mode, and the end of a run.
//
// Synchronisation modes (key `sync`):
//   global  the thesis's: every update a barrier and an all_gather of one float per worker announcing its
//           choice (-1: none), as the thesis's code, real modeled messages even when nobody communicates;
//           then only the communicating pairs exchange models.
//   shared  every worker computes every choice itself from the shared seed; only the communicating pairs
//           exchange, and nothing else synchronises the workers.
//   async   no barrier and no shared knowledge of choices: an initiator sends to its peer, which serves the
//           message at its next step boundary (non-blocking receives tested after each step, and while the
//           worker itself waits on a reply); a worker that has run its steps goes on serving until every other
//           worker has said it is done (rendezvous algorithms) or until it has received every message sent to
//           it (one-way algorithms: an allreduce of the per-peer message counts). Runs are not reproducible on
//           MPI (the order of arrivals decides), but are on the simulator.
// Both synchronous modes are deterministic on both backends: choices come from (seed, rank, update) and every
// sum is taken in rank order.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/gossip_choice.hpp"

namespace dts {

enum class GossipSync { kGlobal, kShared, kAsync };

struct GossipKeys {
  GossipSchedule schedule;
  GossipSync sync = GossipSync::kGlobal;
};

// `probability`, `period`, `seed` and `sync`, strictly.
GossipKeys read_gossip_keys(ConfigReader& r);

// Every worker's choice at an update, in the synchronous modes. One per rank.
class GossipControl {
 public:
  GossipControl(Context& ctx, const GossipKeys& keys, std::shared_ptr<GossipChoiceCache> cache);
  // global: a barrier, then an all_gather of the choices (the gathered values are used; in modeled numerics
  // the gather carries none and they are drawn here); shared: drawn here.
  Choices choices(std::int64_t update);

 private:
  Context& ctx_;
  GossipKeys keys_;
  std::shared_ptr<GossipChoiceCache> cache_;
  Vec one_, all_;
};

// Messages of one tag that arrive from any worker and are handled at step boundaries (asynchronous push
// gossip and GoSGD). One per rank.
class GossipInbox {
 public:
  using Handler = std::function<void(Rank src, ConstSlice message)>;
  GossipInbox(Context& ctx, Tag tag, Vec buffer);
  // Handles every message that has arrived, without blocking.
  void poll(const Handler& handle);
  // After the last step: `sent_to[j]` messages were sent to worker j; learns (an allreduce of the counts) how
  // many were sent to this worker and handles the rest of them, blocking.
  void finish(const std::vector<float>& sent_to, const Handler& handle);

 private:
  void post();
  Context& ctx_;
  Tag tag_;
  Vec buffer_;
  std::vector<Rank> others_;
  Request pending_;
  std::int64_t received_ = 0;
};

// Requests that arrive from any worker and are answered at step boundaries or while this worker waits on its
// own reply (asynchronous Elastic Gossip and pull gossip: the pairs rendezvous). One per rank.
class GossipServer {
 public:
  using Serve = std::function<void(Rank src, ConstSlice request)>;
  GossipServer(Context& ctx, Vec request_buffer, Serve serve);
  // Serves every request that has arrived, without blocking.
  void poll();
  // Waits for `reply` while serving requests.
  void wait_serving(Request& reply);
  // After the last step: tells every other worker it is done and serves until all of them have said so (each
  // says it only after its own last request was answered, so none is left).
  void finish();

 private:
  void post();
  void serve_pending();
  Context& ctx_;
  Vec request_;
  Serve serve_;
  std::vector<Rank> others_;
  Request pending_;
};

// Every worker's replica at the steps where an evaluation is due and at the last (Recorder::observe: the
// replicas' plain mean and their consensus distance, at no simulated cost).
void gossip_observe(Context& ctx, std::int64_t update, ConstSlice params);

// The end of every run of the family: rank 0's own model evaluated (Recorder::evaluate_own), then the
// aggregate as the final model: the tree allreduce of the parameters divided by W, or, with `weight`
// (push-sum), of weight * parameters. `tag`: the allreduce's (other algorithms that end so, BIDMach's grid).
// `members`: the ranks that take part, rank 0 among them, W their count (null: every rank).
void gossip_finish(Context& ctx, Slice params, std::optional<float> weight = std::nullopt,
                   Tag tag = tags::kGossipAverage, const Group* members = nullptr);

}  // namespace dts
