// Group: membership and index lookup.
#include "algorithms/api/group.hpp"

#include <algorithm>
#include <numeric>

#include "core/errors.hpp"
#include "core/hash.hpp"

namespace dts {

std::uint64_t hash_ranks(std::span<const Rank> ranks) {
  std::uint64_t h = kFnv1aBasis;
  for (const Rank r : ranks) h = fnv1a_step(h, static_cast<std::uint64_t>(r));
  return h;
}

Group::Group(std::vector<Rank> members) : Group(Unique{}, std::move(members)) {
  std::vector<Rank> sorted = members_;
  std::sort(sorted.begin(), sorted.end());
  DTS_ASSERT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a group lists a rank twice");
}

Group::Group(Unique, std::vector<Rank> members) : members_(std::move(members)), hash_(hash_ranks(members_)) {
  const bool consecutive =
      std::adjacent_find(members_.begin(), members_.end(), [](Rank a, Rank b) { return b != a + 1; }) == members_.end();
  if (consecutive && !members_.empty()) first_ = members_.front();
}

Group Group::range(Rank first, int n) {
  std::vector<Rank> m(static_cast<std::size_t>(n));
  std::iota(m.begin(), m.end(), first);
  return Group(Unique{}, std::move(m));
}

int Group::index_of(Rank world) const {
  if (first_ >= 0) return world >= first_ && world - first_ < size() ? world - first_ : -1;
  const auto it = std::find(members_.begin(), members_.end(), world);
  return it == members_.end() ? -1 : static_cast<int>(it - members_.begin());
}

}  // namespace dts
