#include "realexec/mpi_engine_hangs.hpp"

#include <algorithm>

namespace dts::mpi {
namespace hangs {

std::string ranks_text(std::vector<Rank> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<std::string> items;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (j - i >= 2) {
      items.push_back(std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]));
    } else {
      for (std::size_t k = i; k <= j; ++k) items.push_back(std::to_string(ranks[k]));
    }
    i = j + 1;
  }
  std::string out = items.size() == 1 && ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

std::vector<Rank> peers_of(const Op& op) { return op.is_recv ? op.want.srcs : std::vector<Rank>{op.dst}; }

std::string describe(const Op& op) {
  const std::string tag = " (tag " + std::to_string(op.want.tag) + ")";
  if (!op.is_recv) return ranks_text({op.dst}) + " to take a message" + tag;
  return std::string("a message from ") + (op.want.srcs.size() > 1 ? "one of " : "") + ranks_text(op.want.srcs) + tag;
}

std::string no_progress_message(double waited_s, const std::string& what, const std::vector<Rank>& suspects) {
  const std::string who = suspects.empty() ? "a peer has hung or died"
                                           : ranks_text(suspects) + (suspects.size() == 1 ? " has" : " have") +
                                                 " hung or died, silent all that time";
  return "waited " + std::to_string(static_cast<long long>(waited_s)) + " s for " + what + " with no progress: " + who +
         " (the limit is dtsim run --hang-timeout)";
}

}  // namespace hangs

using hangs::describe;
using hangs::no_progress_message;
using hangs::peers_of;
using hangs::ranks_text;

std::string Engine::hang_text(double timeout_s, const std::string& what, const std::vector<Rank>& peers) {
  std::vector<Rank> suspects;
  if (peers.size() > 1) {
    take_notices();
    const double since = MPI_Wtime() - timeout_s;
    for (const Rank r : peers) {
      const auto i = static_cast<std::size_t>(r);
      if (!finished_[i] && !peer_failed_[i] && last_heard_[i] < since) suspects.push_back(r);
    }
  }
  return no_progress_message(timeout_s, what, suspects);
}

std::string Engine::hang_message(const Op& op, double timeout_s) {
  std::lock_guard<std::mutex> lock(mu_);
  return hang_text(timeout_s, describe(op), peers_of(op));
}

std::string Engine::hang_message_any(std::size_t operations, double timeout_s) {
  // The requests are opaque here: the peers are those of every operation of this rank still pending.
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Rank> peers;
  for (const auto& op : match_.posted()) peers.insert(peers.end(), op->want.srcs.begin(), op->want.srcs.end());
  for (const auto& op : in_flight_) peers.push_back(op->is_recv ? op->source : op->dst);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  const std::string what = "any of " + std::to_string(operations) + " operations" +
                           (peers.empty() ? "" : " (with " + ranks_text(peers) + ")");
  return hang_text(timeout_s, what, peers);
}

}  // namespace dts::mpi
