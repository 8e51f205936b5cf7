// How parameter-sized vectors travel between ranks (papers/easgd_hpc.md §7 T7), shared by the master-worker
// algorithms: packed, one message for the whole vector (the layers lie contiguously in one buffer), or per
// layer, one message per ParamBlock of the model in layer order, as frameworks that communicate layer by
// layer do: L alpha + |W| beta instead of alpha + |W| beta. Both carry the same floats in the same order, so
// results never depend on the choice; only message counts and times do. The pieces of one vector share one
// tag and stay in order by MPI's non-overtaking rule. Also: the "packed" key and the master's model clock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/group.hpp"
#include "algorithms/api/recorder.hpp"
#include "core/config_reader.hpp"

namespace dts {

// The pieces of one vector in flight; complete when every piece is. Move-only, like Request.
class Transfer {
 public:
  Transfer() = default;
  explicit Transfer(std::vector<Request> pieces) : pieces_(std::move(pieces)) {}
  // True once every piece has completed (an empty Transfer is complete).
  bool test();
  // Blocks until every piece completes; returns the first status that is not kOk (kOk if none). Idempotent.
  Status wait();
  // wait(); throws CommError unless kOk.
  void wait_ok();

 private:
  std::vector<Request> pieces_;
};

class ParamExchange {
 public:
  // packed: one message per vector; otherwise one per block of compute.param_blocks(), which must tile
  // [0, num_params) in order.
  ParamExchange(const Compute& compute, bool packed);

  // Point-to-point, piece by piece on one tag; `opts` applies to every piece.
  Transfer isend(Comm& comm, Rank dst, Tag tag, ConstSlice v, const SendOptions& opts = {}) const;
  Transfer irecv(Comm& comm, Rank src, Tag tag, Slice v) const;
  // Blocks until delivered, so the pieces are read in place (SendOptions::borrow): no snapshot.
  void send(Comm& comm, Rank dst, Tag tag, ConstSlice v) const { isend(comm, dst, tag, v, kBorrowed).wait_ok(); }
  void recv(Comm& comm, Rank src, Tag tag, Slice v) const { irecv(comm, src, tag, v).wait_ok(); }

  // First come, first served: irecv_first() posts the receive of the first piece only, from any of `srcs`,
  // to wait_any() on with other requests; once it completes, irecv_rest() takes the other pieces from the
  // sender it matched. Wait for them before posting the next irecv_first() on the same tag, so that a
  // first-piece receive can never match another sender's later piece.
  Request irecv_first(Comm& comm, std::span<const Rank> srcs, Tag tag, Slice v) const;
  Transfer irecv_rest(Comm& comm, Rank src, Tag tag, Slice v) const;

  // Binomial-tree collectives (algorithms/collectives/tree.cpp), run piece after piece: a broadcast of the
  // root's vector, and a sum to the root (the other members' vectors are scratch afterwards).
  void tree_broadcast(Comm& comm, const Group& group, Slice v, int root, Tag tag) const;
  void tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice v, int root, Tag tag) const;

 private:
  static constexpr SendOptions kBorrowed{.modeled_bytes = std::nullopt, .borrow = true};
  struct Piece {
    std::size_t offset = 0, count = 0;
  };
  std::vector<Piece> pieces_;
};

// Reads the algorithm key "packed" (default true).
bool read_packed(ConfigReader& r);

// Where a master (EASGD center, parameter server) stands in steps of one worker, for evaluation: after
// `updates` single-worker updates, each standing for tau steps of one of P workers, the model has seen
// updates * tau / P steps of one worker. tick() after each update evaluates the model when that count
// reaches a step the recorder wants; final() evaluates it once as the run's result. The counter is atomic
// so that concurrent server activities (Hogwild) may share one clock.
class ModelClock {
 public:
  ModelClock(int workers, std::int64_t tau, std::int64_t steps) : workers_(workers), tau_(tau), steps_(steps) {}
  void start(Recorder& recorder, ConstSlice model) const {
    if (recorder.eval_due(0)) recorder.evaluate(0, model);
  }
  void tick(Recorder& recorder, ConstSlice model) {
    const std::int64_t n = ++updates_;
    const std::int64_t before = std::min(steps_, (n - 1) * tau_ / workers_),
                       now = std::min(steps_, n * tau_ / workers_);
    for (std::int64_t s = before + 1; s <= now; ++s) {
      if (s < steps_ && recorder.eval_due(s)) {  // the last step is final()'s
        recorder.evaluate(s, model);
        return;
      }
    }
  }
  void final(Recorder& recorder, ConstSlice model) const { recorder.evaluate(steps_, model, /*final=*/true); }
  std::int64_t updates() const { return updates_; }

 private:
  std::int64_t workers_, tau_, steps_;
  std::atomic<std::int64_t> updates_{0};
};

}  // namespace dts
