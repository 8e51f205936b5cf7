// Group: membership and index lookup.
#include "algorithms/api/group.hpp"

#include <algorithm>
#include <numeric>

#include "algorithms/api/errors.hpp"

namespace dts {

Group::Group(std::vector<Rank> members) : members_(std::move(members)) {
  std::vector<Rank> sorted = members_;
  std::sort(sorted.begin(), sorted.end());
  DTS_ASSERT(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "a group lists a rank twice");
}

Group Group::range(Rank first, int n) {
  std::vector<Rank> m(static_cast<std::size_t>(n));
  std::iota(m.begin(), m.end(), first);
  return Group(std::move(m));
}

int Group::index_of(Rank world) const {
  const auto it = std::find(members_.begin(), members_.end(), world);
  return it == members_.end() ? -1 : static_cast<int>(it - members_.begin());
}

}  // namespace dts
