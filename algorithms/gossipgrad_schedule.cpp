// GossipGradSchedule: partner rules of papers/gossipgrad.md §4 over the communicators of §5.
#include "algorithms/gossipgrad_schedule.hpp"

#include "core/errors.hpp"
#include "kernels/rng.hpp"

namespace dts {

GossipPattern gossip_pattern(const std::string& name) {
  if (name == "hypercube") return GossipPattern::kHypercube;
  DTS_ASSERT(name == "dissemination", "gossip_pattern: " + name);
  return GossipPattern::kDissemination;
}

GossipGradSchedule::GossipGradSchedule(int p, GossipPattern pattern, bool rotate, std::uint64_t seed,
                                       const std::string& pattern_key)
    : p_(p), L_(0), pattern_(pattern), rotate_(rotate), seed_(seed) {
  DTS_ASSERT(p >= 1, "GossipGradSchedule: p = " + std::to_string(p));
  while ((1 << L_) < p) ++L_;
  if (pattern == GossipPattern::kHypercube && !power_of_two()) {
    throw ConfigError(pattern_key, "hypercube needs a power-of-two number of workers, got " + std::to_string(p) +
                                       " (dissemination runs any count)");
  }
}

std::int64_t GossipGradSchedule::communicator(std::int64_t step) const {
  if (!rotate_ || L_ == 0) return 0;
  return (step / L_) % p_;
}

std::shared_ptr<const GossipGradSchedule::Labelling> GossipGradSchedule::labelling(std::int64_t m) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(m);
  if (it != cache_.end()) return it->second;
  auto l = std::make_shared<Labelling>();
  l->order.resize(static_cast<std::size_t>(p_));
  for (int i = 0; i < p_; ++i) l->order[static_cast<std::size_t>(i)] = i;
  if (m > 0) {  // Fisher-Yates from (seed, m)
    Rng rng(seed_, static_cast<std::uint64_t>(m), "gossipgrad_comm");
    for (std::size_t i = l->order.size(); i > 1; --i) std::swap(l->order[i - 1], l->order[rng.below(i)]);
  }
  l->virtual_.resize(l->order.size());
  for (std::size_t v = 0; v < l->order.size(); ++v)
    l->virtual_[static_cast<std::size_t>(l->order[v])] = static_cast<Rank>(v);
  // Ranks drift apart by a few rounds at most; keep the newest few (a rank far behind rebuilds its own).
  constexpr std::size_t kKeep = 4;
  cache_.emplace(m, l);
  while (cache_.size() > kKeep) cache_.erase(cache_.begin()->first == m ? std::next(cache_.begin()) : cache_.begin());
  return l;
}

GossipPartners GossipGradSchedule::partners(Rank rank, std::int64_t step) const {
  if (L_ == 0) return {};
  const auto l = labelling(communicator(step));
  const int k = static_cast<int>(step % L_);
  const int v = l->virtual_[static_cast<std::size_t>(rank)], d = 1 << k;
  int to = 0, from = 0;
  if (pattern_ == GossipPattern::kHypercube) {
    to = from = v ^ d;
  } else {
    to = (v + d) % p_;
    from = ((v - d) % p_ + p_) % p_;
  }
  return {l->order[static_cast<std::size_t>(to)], l->order[static_cast<std::size_t>(from)]};
}

}  // namespace dts
