// Group: membership and index lookup.
#include "algorithms/api/group.hpp"

#include <algorithm>
#include <mutex>
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
  std::vector<Rank> sorted = *members_;
  std::sort(sorted.begin(), sorted.end());
  DTS_ASSERT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a group lists a rank twice");
}

Group::Group(Unique, std::vector<Rank> members)
    : members_(std::make_shared<const std::vector<Rank>>(std::move(members))), hash_(hash_ranks(*members_)) {
  const std::vector<Rank>& m = *members_;
  const bool consecutive = std::adjacent_find(m.begin(), m.end(), [](Rank a, Rank b) { return b != a + 1; }) == m.end();
  if (consecutive && !m.empty()) first_ = m.front();
}

Group::Group(std::shared_ptr<const std::vector<Rank>> members, std::uint64_t hash, Rank first)
    : members_(std::move(members)), hash_(hash), first_(first) {}

Group Group::range(Rank first, int n) {
  // The last range asked for, kept (a process asks for one or two ranges, once per rank and call). A mutex:
  // ranks of the MPI backend may build groups from threads.
  static std::mutex mutex;
  static std::shared_ptr<const std::vector<Rank>> last;
  static std::uint64_t last_hash = 0;
  const std::lock_guard<std::mutex> lock(mutex);
  if (last && last->size() == static_cast<std::size_t>(n) && (n == 0 || last->front() == first)) {
    return Group(last, last_hash, n == 0 ? -1 : first);  // no scan: a range's members are consecutive
  }
  std::vector<Rank> m(static_cast<std::size_t>(n));
  std::iota(m.begin(), m.end(), first);
  Group g(Unique{}, std::move(m));
  last = g.members_;
  last_hash = g.hash_;
  return g;
}

int Group::index_of(Rank world) const {
  if (first_ >= 0) return world >= first_ && world - first_ < size() ? world - first_ : -1;
  const auto it = std::find(members_->begin(), members_->end(), world);
  return it == members_->end() ? -1 : static_cast<int>(it - members_->begin());
}

}  // namespace dts
