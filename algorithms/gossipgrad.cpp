// GossipGraD (Daily et al. 2018; papers/gossipgrad.md §9): every step each worker sends its model to one
// partner and receives one partner's, by the dissemination or hypercube schedule with partner rotation
// (algorithms/gossipgrad_schedule.hpp), and mixes with weight 1/2: w <- (w + w_r) / 2, and the same for the
// optimizer's momentum buffer (the authors' code; `exchange_momentum`). The message is one packed buffer
// (weights, then each optimizer state buffer), so a node sends exactly one model message per step.
//
// When the exchange happens (`lag`, §8):
//   1 (default, the code): post isend/irecv of the start-of-step model at the start of step t, train, take
//     the local step, then wait and mix: w(t+1) = (w_j after step t + w_r as sent at the start of t) / 2.
//     The exchange overlaps the whole step. Waiting after the local step is the code's "Waitall at the start
//     of batch t+1": nothing happens in between.
//   0: after backward, exchange the pre-update model, wait, mix, then apply the own gradient:
//     w(t+1) = (w_j(t) + w_r(t)) / 2 - own step.
//   literal (the proof's form, for convergence checks): local step, then exchange the post-update models,
//     wait, mix. Not overlapped.
//
// The ring sample shuffle (§6, `shuffle`): at the start of step t a node sends the rows its step-t batch
// trains on (copied out as the batch is loaded) to rank - 1 and receives rank + 1's; after the forward pass it
// waits and puts the received rows in place of its own in its shard, where they are trained on from the next
// local epoch on. A sample therefore moves one hop down the ring each time it is used, and returns to a node
// after every other node has used it once (p local epochs). The data set is the same on every rank, so a
// row's identity is its index: the message carries the b row indices while the network is charged the raw
// samples, b x (bytes of one sample's pixels, one byte each) + 4b label bytes (Compute::raw_batch_bytes).
// With modeled numerics only those bytes move.
//
// MPI progress (§7, G11; `progress`, `eager_threshold_bytes`). A message at most the eager threshold is sent
// at once in every model. A larger (rendezvous) message advances only while its sender is inside MPI:
//   thread   a progress thread: posted at the start of the step, it overlaps everything (the simulator's
//            transfers advance on their own, which is this model);
//   testall  (default, the paper's design) MPI_Testall at the test points after the forward and after the
//            backward pass: the transfer starts at the first test point after it is posted, the one after the
//            forward pass, and overlaps the backward pass and the update;
//   none     no progress calls: the transfer starts only at the wait, fully exposed.
// The simulator models a deferred start by posting the isend at that point (the receive is posted at once).
// On MPI the same code posts at the same points, and the library's own progress does the rest.
// With lag 0 and literal the exchange is waited as soon as it is posted, so progress changes nothing. The
// shuffle is waited at the test point after the forward pass: under testall a rendezvous-size shuffle (ImageNet
// batches) starts there and is exposed, under none likewise.
//
// The reported model: the average of the workers' models (`final_model: average`, a tree allreduce after
// the last step; rank 0's own is then recorded beside it, summary.json rank0_test_accuracy) or rank 0's own
// (`rank0`). Rank 0 evaluates its own model at eval-due steps; every worker
// hands its replica to Recorder::observe then and after the last step (the replicas' mean and consensus
// distance).
#include <cstring>
#include <iostream>
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/gossipgrad_schedule.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

enum class Lag : std::uint8_t { kOne, kZero, kLiteral };
enum class Progress : std::uint8_t { kThread, kTestall, kNone };

struct GossipGradConfig {
  Lag lag = Lag::kOne;
  bool exchange_momentum = true;
  bool shuffle = true;
  Progress progress = Progress::kTestall;
  std::uint64_t eager_threshold_bytes = 65536;
  bool final_average = true;
};

// A send whose start the progress model may defer to a later point of the step.
class DeferredSend {
 public:
  DeferredSend(Comm& comm, Rank dst, Tag tag, ConstSlice data, SendOptions opts)
      : comm_(comm), dst_(dst), tag_(tag), data_(data), opts_(opts) {}
  void post() {
    if (!req_.valid() && !done_) req_ = comm_.isend(dst_, tag_, data_, opts_);
  }
  void wait() {
    post();
    req_.wait_ok();
    done_ = true;
  }

 private:
  Comm& comm_;
  Rank dst_;
  Tag tag_;
  ConstSlice data_;
  SendOptions opts_;
  Request req_;
  bool done_ = false;
};

// Where the progress model lets a message of `bytes` start: 0 at posting, 1 at the test point after the
// forward pass, 2 at the wait.
int start_point(const GossipGradConfig& cfg, std::uint64_t bytes) {
  if (bytes <= cfg.eager_threshold_bytes || cfg.progress == Progress::kThread) return 0;
  return cfg.progress == Progress::kTestall ? 1 : 2;
}

class GossipGradRank {
 public:
  GossipGradRank(Context& ctx, const GossipGradConfig& cfg, const GossipGradSchedule& schedule)
      : ctx_(ctx), cfg_(cfg), schedule_(schedule), P_(ctx.comm.size()), me_(ctx.comm.rank()) {}

  void run() {
    Compute& compute = ctx_.compute;
    n_ = compute.num_params();
    params_ = compute.make_vec();
    grads_ = compute.make_vec();
    compute.init_params(params_);
    if (cfg_.exchange_momentum) state_ = compute.optimizer_state();
    const std::size_t packed = n_ * (1 + state_.size());
    send_ = Vec(packed, compute.real());
    recv_ = Vec(packed, compute.real());
    if (me_ == 0 && ctx_.recorder.eval_due(0)) ctx_.recorder.evaluate(0, params_);

    for (std::int64_t t = 0; t < ctx_.steps; ++t) {
      const float loss = step(t);
      ctx_.recorder.step(t + 1, loss);
      const bool last = t + 1 == ctx_.steps;
      if (last || ctx_.recorder.eval_due(t + 1)) ctx_.recorder.observe(t + 1, params_);  // the replicas' mean
      if (me_ == 0 && !last && ctx_.recorder.eval_due(t + 1)) ctx_.recorder.evaluate(t + 1, params_);
    }
    if (cfg_.final_average && P_ > 1) {
      if (me_ == 0) ctx_.recorder.evaluate_own(ctx_.steps, params_);  // rank 0's own model, beside the average
      collectives::tree_allreduce(ctx_.comm, compute, Group::range(0, P_), params_, tags::kGossipGradAverage);
      rules::scale(params_, 1.0f / static_cast<float>(P_));
    }
    if (me_ == 0) ctx_.recorder.evaluate(ctx_.steps, params_, true);
  }

 private:
  // The model and the optimizer state into the send buffer (the code's copy before the local update).
  void pack() {
    rules::copy(send_.sub(0, n_), params_);
    for (std::size_t i = 0; i < state_.size(); ++i) rules::copy(send_.sub((i + 1) * n_, n_), state_[i]);
    ctx_.compute.charge_elementwise(send_.count(), 2);
  }
  // w <- (w + w_r) / 2 and the same for each state buffer.
  void mix() {
    const auto half = [&](Slice mine, ConstSlice theirs) {
      rules::axpy(mine, 1.0f, theirs);
      rules::scale(mine, 0.5f);
    };
    half(params_, recv_.sub(0, n_));
    for (std::size_t i = 0; i < state_.size(); ++i) half(state_[i], recv_.sub((i + 1) * n_, n_));
    ctx_.compute.charge_elementwise(recv_.count(), 3);
  }

  float step(std::int64_t t) {
    Compute& compute = ctx_.compute;
    Comm& comm = ctx_.comm;
    const GossipPartners partner = schedule_.partners(me_, t);
    const bool exchange = partner.send_to >= 0;
    const std::uint64_t model_bytes = 4 * send_.count();

    // The ring shuffle, posted at the start of the step.
    std::unique_ptr<DeferredSend> shuffle_send;
    Request shuffle_recv;
    std::vector<float> rows_out, rows_in;
    bool real_rows = false;
    const std::uint64_t shuffle_bytes = cfg_.shuffle && P_ > 1 ? compute.raw_batch_bytes() : 0;
    if (shuffle_bytes > 0) {
      const std::vector<std::uint32_t> rows = compute.next_batch_rows();
      real_rows = !rows.empty();
      // Row indices travel bit for bit in the floats of the message; without real rows (modeled numerics) a
      // data-less message of one float stands for the batch.
      rows_out.resize(rows.size());
      if (!rows.empty()) std::memcpy(rows_out.data(), rows.data(), rows.size() * sizeof(float));
      rows_in.resize(rows_out.size());
      const std::size_t count = std::max<std::size_t>(rows.size(), 1);
      shuffle_recv = comm.irecv((me_ + 1) % P_, tags::kGossipGradShuffle, Slice(std::span<float>(rows_in), count));
      SendOptions opts;
      opts.modeled_bytes = shuffle_bytes;
      shuffle_send = std::make_unique<DeferredSend>(comm, (me_ + P_ - 1) % P_, tags::kGossipGradShuffle,
                                                    ConstSlice(std::span<const float>(rows_out), count), opts);
      if (start_point(cfg_, shuffle_bytes) == 0) shuffle_send->post();
    }

    // Lag 1: the model exchange, posted at the start of the step.
    std::unique_ptr<DeferredSend> model_send;
    Request model_recv;
    const auto post_exchange = [&] {
      pack();
      model_recv = comm.irecv(partner.recv_from, tags::kGossipGrad, recv_);
      SendOptions opts;
      opts.borrow = true;  // send_ stays untouched until the send is waited
      model_send = std::make_unique<DeferredSend>(comm, partner.send_to, tags::kGossipGrad, send_, opts);
    };
    const auto wait_exchange = [&] {
      model_send->wait();
      model_recv.wait_ok();
      mix();
    };
    if (exchange && cfg_.lag == Lag::kOne) {
      post_exchange();
      if (start_point(cfg_, model_bytes) == 0) model_send->post();
    }

    Compute::StepHooks hooks;
    hooks.after_forward = [&] {
      // The test point after the forward pass; the shuffle is needed from here on.
      if (model_send && start_point(cfg_, model_bytes) == 1) model_send->post();
      if (shuffle_send) {
        shuffle_send->wait();
        shuffle_recv.wait_ok();
        if (real_rows) {
          std::vector<std::uint32_t> rows(rows_in.size());
          std::memcpy(rows.data(), rows_in.data(), rows.size() * sizeof(float));
          compute.replace_last_batch_rows(rows);
        }
      }
    };
    const float loss = compute.forward_backward_hooked(params_, grads_, hooks);

    switch (cfg_.lag) {
      case Lag::kOne:
        compute.optimizer_step(params_, grads_);
        if (exchange) wait_exchange();
        break;
      case Lag::kZero:
        if (exchange) {
          post_exchange();
          wait_exchange();
        }
        compute.optimizer_step(params_, grads_);
        break;
      case Lag::kLiteral:
        compute.optimizer_step(params_, grads_);
        if (exchange) {
          post_exchange();
          wait_exchange();
        }
        break;
    }
    return loss;
  }

  Context& ctx_;
  const GossipGradConfig& cfg_;
  const GossipGradSchedule& schedule_;
  int P_;
  Rank me_;
  std::size_t n_ = 0;
  Vec params_, grads_, send_, recv_;
  std::vector<Slice> state_;
};

}  // namespace

AlgorithmSpec gossipgrad_spec() {
  return {"gossipgrad",
          "GossipGraD: one pairwise model exchange per step (dissemination or hypercube, rotated partners), ring "
          "sample shuffle",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int workers) -> RankMain {
            GossipGradConfig cfg;
            const std::string pattern = r.choice("pattern", "dissemination", {"dissemination", "hypercube"});
            const bool rotate = r.boolean("rotate", true);
            const auto seed = static_cast<std::uint64_t>(r.integer("rotation_seed", 1, 0, std::int64_t{1} << 62));
            // lag: 1, 0 or "literal".
            if (r.has("lag") && r.raw("lag").is_string()) {
              if (r.raw("lag") != "literal") r.fail("lag", "expected 0, 1 or \"literal\"");
              cfg.lag = Lag::kLiteral;
              r.resolved()["lag"] = "literal";
            } else {
              cfg.lag = r.integer("lag", 1, 0, 1) == 1 ? Lag::kOne : Lag::kZero;
            }
            cfg.exchange_momentum = r.boolean("exchange_momentum", true);
            cfg.shuffle = r.boolean("shuffle", true);
            const std::string progress = r.choice("progress", "testall", {"testall", "thread", "none"});
            cfg.progress = progress == "thread" ? Progress::kThread
                           : progress == "none" ? Progress::kNone
                                                : Progress::kTestall;
            cfg.eager_threshold_bytes =
                static_cast<std::uint64_t>(r.integer("eager_threshold_bytes", 65536, 0, std::int64_t{1} << 40));
            cfg.final_average = r.choice("final_model", "average", {"average", "rank0"}) == "average";
            auto schedule = std::make_shared<GossipGradSchedule>(workers, gossip_pattern(pattern), rotate, seed,
                                                                 r.where("pattern"));
            if (!schedule->power_of_two()) {
              const std::string note = std::to_string(workers) + " workers is not a power of two: dissemination with " +
                                       std::to_string(schedule->steps_per_round()) +
                                       " steps per round (an extension of the paper); one round no longer "
                                       "gives every node the exact mean";
              std::cerr << "warning: gossipgrad: " << note << '\n';
              r.resolved()["schedule_note"] = note;
            }
            return [cfg, schedule](Context& ctx) { GossipGradRank(ctx, cfg, *schedule).run(); };
          }};
}

}  // namespace dts
