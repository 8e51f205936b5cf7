// WaitLog: a rank's blocked time by peer.
#include "algorithms/api/wait_log.hpp"

namespace dts {

void WaitLog::add(Rank peer, double seconds) {
  if (!(seconds > 0)) return;
  const std::lock_guard<std::mutex> lock(mu_);
  blocked_s_ += seconds;
  if (peer >= 0) by_peer_[peer] += seconds;
}

double WaitLog::blocked_s() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return blocked_s_;
}

std::map<Rank, double> WaitLog::waited_on() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return by_peer_;
}

}  // namespace dts
