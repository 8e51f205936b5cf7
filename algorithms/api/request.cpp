// Request's non-virtual helpers.
#include "algorithms/api/request.hpp"

#include <string>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/wait_log.hpp"
#include "core/errors.hpp"

namespace dts {

const char* to_string(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kTimeout:
      return "timeout";
    case Status::kPeerFailed:
      return "peer failed";
    case Status::kCancelled:
      return "cancelled";
  }
  return "?";
}

PeerFailed::PeerFailed(Rank peer, const std::string& who)
    : CommError(who + (who.empty() ? "" : ": ") + "peer rank " + std::to_string(peer) + " failed"), peer_(peer) {}

void require_ok(Status s, Rank peer, const std::string& who) {
  if (s == Status::kOk) return;
  if (s == Status::kPeerFailed) throw PeerFailed(peer, who);
  throw CommError(who + (who.empty() ? "" : ": ") + "request failed: " + to_string(s));
}

Status Request::wait(double timeout_s) {
  if (comm_ == nullptr || comm_->wait_log() == nullptr || impl_->test()) return impl_->wait(timeout_s);
  const double begin_s = comm_->now_s();
  const Status s = impl_->wait(timeout_s);
  charge_wait(begin_s, s);
  return s;
}

void Request::charge_wait(double begin_s, Status s) const {
  WaitLog* log = comm_ != nullptr ? comm_->wait_log() : nullptr;
  if (log != nullptr) log->add(s == Status::kTimeout ? -1 : peer(), comm_->now_s() - begin_s);
}

void Request::wait_ok() {
  const Status s = wait();
  require_ok(s, s == Status::kPeerFailed ? source() : -1, "");
}

}  // namespace dts
