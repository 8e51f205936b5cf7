#include "algorithms/gossip_choice.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/rng.hpp"

namespace dts {

Rank gossip_choice(const GossipSchedule& s, int W, Rank rank, std::int64_t update) {
  if (W < 2 || update % s.period != 0) return -1;
  // Two levels, so that (rank, update) pairs never collide through the xor of the Rng's seeding.
  Rng step(s.seed, static_cast<std::uint64_t>(update), "gossip_update");
  Rng rng(step.next_u64(), static_cast<std::uint64_t>(rank), "gossip_choice");
  const bool initiate = rng.uniform() < s.probability;
  const double u = rng.uniform();  // drawn either way: the peer of an update does not depend on p
  if (!initiate) return -1;
  const auto offset = static_cast<int>(std::floor(u * static_cast<double>(W - 1)));
  return (rank + 1 + offset) % W;
}

std::vector<Rank> gossip_choices(const GossipSchedule& s, int W, std::int64_t update) {
  std::vector<Rank> c(static_cast<std::size_t>(W));
  for (Rank i = 0; i < W; ++i) c[static_cast<std::size_t>(i)] = gossip_choice(s, W, i, update);
  return c;
}

std::vector<Rank> gossip_choosers(std::span<const Rank> choices, Rank i) {
  std::vector<Rank> r;
  for (std::size_t j = 0; j < choices.size(); ++j) {
    if (choices[j] == i) r.push_back(static_cast<Rank>(j));
  }
  return r;
}

std::vector<Rank> gossip_partners(std::span<const Rank> choices, Rank i) {
  std::vector<Rank> k = gossip_choosers(choices, i);
  const Rank own = choices[static_cast<std::size_t>(i)];
  if (own >= 0 && !std::binary_search(k.begin(), k.end(), own))
    k.insert(std::lower_bound(k.begin(), k.end(), own), own);
  return k;
}

Choices GossipChoiceCache::choices(int W, std::int64_t update) {
  auto it = by_update_.find(update);
  if (it == by_update_.end()) {
    it = by_update_.emplace(update, std::make_shared<const std::vector<Rank>>(gossip_choices(s_, W, update))).first;
    while (by_update_.begin()->first < update - kKeep) by_update_.erase(by_update_.begin());
  }
  return it->second;
}

}  // namespace dts
