// The communication half of the seam (DESIGN.md §2): non-blocking point-to-point with request handles.
// Contract, as in MPI: messages between one pair of ranks with one tag are matched in the order they were
// sent; a receive buffer must hold exactly the message's count. A sent buffer is snapshotted at isend time,
// so the caller may modify it at once (the send still completes only when the message is delivered).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "algorithms/api/collective_engine.hpp"
#include "algorithms/api/request.hpp"
#include "algorithms/api/vec.hpp"

namespace dts {

class WaitLog;

struct SendOptions {
  // Bytes charged to the network; defaults to 4 * data.count. Lets sim/ model fp16 or top-k compression
  // while real fp32 values travel (s4u: payload vs simulated size).
  std::optional<std::uint64_t> modeled_bytes;
  // The caller leaves `data` unchanged (and alive) until the send completes, so the backend may read it in
  // place instead of copying it at isend; the send's Request must be waited before the buffer is touched.
  bool borrow = false;
  // The round of the exchange the message belongs to (algorithms/api/matching.hpp): only a receive of the
  // same round takes it, and Comm::drop_stale discards it once its round is given up.
  Round round = 0;
  // The caller waits for the send at once (Comm::send sets it): the simulator charges a blocking send's
  // overhead rather than a non-blocking one's (SMPI's smpi/os vs smpi/ois; sim/message_cost_spec.hpp).
  bool blocking = false;
};

struct RecvOptions {
  // The message is added into `data` (data += message) instead of copied over it: a reduction step needs no
  // buffer of its own (the simulator adds straight from the sender's data).
  bool add = false;
  Round round = 0;  // takes only a message of this round
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual Rank rank() const = 0;
  virtual int size() const = 0;
  // Simulated clock in sim/, wall clock since the start of the run in realexec/.
  virtual double now_s() const = 0;

  virtual Request isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts = {}) = 0;
  virtual Request irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts = {}) = 0;
  // Completes on the first message with `tag` from any rank in `srcs` (Gloo's recv(srcRanks)).
  virtual Request irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts = {}) = 0;
  // Gives up the rounds of `tag` below `before`: messages of those rounds sent to this rank are discarded,
  // those that have arrived unreceived and those still on the way, so that they never match a receive.
  virtual void drop_stale(Tag tag, Round before) = 0;
  // Blocks until one of the valid requests completes; returns which, and resets that handle (the others
  // stay valid). At least one request must be valid. Written once for every backend, over block_until.
  // With a timeout: after timeout_s of (simulated or wall) time with none complete, returns index
  // reqs.size() and kTimeout, every request still pending.
  struct Completion {
    std::size_t index = 0;
    Rank source = -1;  // the sender, for a receive; the failed peer for kPeerFailed
    Status status = Status::kOk;
  };
  Completion wait_any(std::span<Request> reqs, double timeout_s = kForever);

  // The backend's blocking primitive: returns true once ready() is true, re-checking it whenever a request
  // of this rank may have completed, or false after timeout_s. `operations`: how many requests the caller
  // waits on, for the backend's report of a hang (MPI throws CommError when an unbounded wait sees no
  // progress for its hang timeout; the simulator waits as long as it takes, and counts the time as waiting
  // until the completed request's wait()).
  virtual bool block_until(const std::function<bool()>& ready, std::size_t operations, double timeout_s) = 0;

  // Modeled bytes this rank has sent and received so far.
  virtual std::uint64_t bytes_sent() const = 0;
  virtual std::uint64_t bytes_received() const = 0;

  // Where this rank's blocked waits are charged, by the peer that ended each (algorithms/api/wait_log.hpp);
  // null: nowhere. A Comm that wraps another answers the inner one's.
  virtual WaitLog* wait_log() const { return wait_log_; }
  void set_wait_log(WaitLog* log) { wait_log_ = log; }

  // A backend's whole-collective engine (algorithms/api/collective_engine.hpp); null when collectives are
  // to run as point-to-point messages (MPI, and the simulator's `message` fidelity).
  virtual CollectiveEngine* collective_engine() { return nullptr; }

  // Added for BIDMach's versioned rounds (issue 17): the largest round this backend carries (MPI: what fits in
  // an MPI tag beside the tag, realexec/tag_codec.hpp); the simulator carries any.
  virtual Round max_round() const { return ~Round{0}; }

  // Blocking forms.
  void send(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts = {}) {
    SendOptions blocking = opts;
    blocking.blocking = true;
    isend(dst, tag, data, blocking).wait_ok();
  }
  void recv(Rank src, Tag tag, Slice data) { irecv(src, tag, data).wait_ok(); }

 private:
  WaitLog* wait_log_ = nullptr;
};

}  // namespace dts
