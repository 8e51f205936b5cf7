// An ordered set of world ranks that take part in a collective (a grid row, a gossip pair, all workers).
// Group index i is the i-th member; collectives run in group indices and talk in world ranks.
#pragma once

#include <span>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts {

class Group {
 public:
  explicit Group(std::vector<Rank> members);
  // Ranks [first, first + n).
  static Group range(Rank first, int n);
  int size() const { return static_cast<int>(members_.size()); }
  Rank world_rank(int index) const { return members_[static_cast<std::size_t>(index)]; }
  // Index of a world rank in the group; -1 if it is not a member.
  int index_of(Rank world) const;
  std::span<const Rank> members() const { return members_; }

 private:
  std::vector<Rank> members_;
};

}  // namespace dts
