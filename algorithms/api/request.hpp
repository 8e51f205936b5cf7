// Move-only handle to one in-flight point-to-point operation (cf. MPI_Request, s4u::CommPtr, c10d::Work).
// wait() blocks the calling activity: an actor in sim/, a thread in realexec/. Expected faults come back
// as a Status, never as an exception (STYLE.md §8).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/errors.hpp"

namespace dts {

using Rank = int;
using Tag = int;
// Which round (epoch) of an exchange a message belongs to; travels beside the tag (SendOptions::round).
using Round = std::uint32_t;
inline constexpr double kForever = std::numeric_limits<double>::infinity();

enum class Status : std::uint8_t { kOk, kTimeout, kPeerFailed, kCancelled };
const char* to_string(Status s);

// What an algorithm that cannot go on without a failed peer throws ("peer rank 3 failed").
class PeerFailed : public CommError {
 public:
  PeerFailed(Rank peer, const std::string& who);
  Rank peer() const { return peer_; }

 private:
  Rank peer_;
};

// Throws unless `s` is kOk: PeerFailed naming `peer` for kPeerFailed, else CommError; `who` ("async_sgd
// master") starts the message.
void require_ok(Status s, Rank peer, const std::string& who);

namespace detail {
// What a backend implements behind a Request.
class RequestImpl {
 public:
  virtual ~RequestImpl() = default;
  virtual bool test() = 0;
  virtual Status wait(double timeout_s) = 0;
  virtual Rank source() const = 0;
  virtual void cancel() = 0;
};
}  // namespace detail

class Comm;

class Request {
 public:
  Request() = default;
  // `comm`: the Comm whose wait log (Comm::wait_log) and clock time this request's blocked waits (null: not
  // recorded); `dst`: a send's destination (-1 for a receive).
  explicit Request(std::unique_ptr<detail::RequestImpl> impl, const Comm* comm = nullptr, Rank dst = -1)
      : impl_(std::move(impl)), comm_(comm), dst_(dst) {}
  Request(Request&&) noexcept = default;
  Request& operator=(Request&&) noexcept = default;
  ~Request() = default;  // a pending receive is cancelled; a pending send still completes (its data was copied)

  bool valid() const { return impl_ != nullptr; }
  // Non-blocking; true once complete (successfully or not).
  bool test() { return impl_->test(); }
  // Blocks until complete or until timeout_s of (simulated or wall) time has passed: kTimeout then,
  // and the request stays pending (wait again or cancel it). A wait that blocked is charged to peer() in
  // the Comm's wait log.
  Status wait(double timeout_s = kForever);
  // wait(); throws CommError unless kOk.
  void wait_ok();
  // The sender of a completed receive (meaningful after irecv_any).
  Rank source() const { return impl_->source(); }
  // The rank that completes this request: a send's destination, a completed receive's sender.
  Rank peer() const { return dst_ >= 0 ? dst_ : source(); }
  // Charges a wait on this request that began at begin_s on the Comm's clock and ended now with `s` to the
  // Comm's wait log: to peer(), or to no one for kTimeout. Comm::wait_any's, and wait()'s.
  void charge_wait(double begin_s, Status s) const;
  // A pending receive completes as kCancelled and will not take a message; a send cannot be recalled.
  void cancel() { impl_->cancel(); }
  void reset() { impl_.reset(); }

 private:
  std::unique_ptr<detail::RequestImpl> impl_;
  const Comm* comm_ = nullptr;
  Rank dst_ = -1;
};

}  // namespace dts
