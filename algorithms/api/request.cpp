// Request's non-virtual helpers.
#include "algorithms/api/request.hpp"

#include <string>

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

void Request::wait_ok() {
  const Status s = wait();
  require_ok(s, s == Status::kPeerFailed ? source() : -1, "");
}

}  // namespace dts
