// An ordered set of world ranks that take part in a collective (a grid row, a gossip pair, all workers).
// Group index i is the i-th member; collectives run in group indices and talk in world ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts {

// FNV-1a (core/hash.hpp) over the ranks in order, each folded as one value: what identifies a set of members
// (the simulator keys collectives by it).
std::uint64_t hash_ranks(std::span<const Rank> ranks);

class Group {
 public:
  explicit Group(std::vector<Rank> members);
  // Moving copies (the members are shared): a moved-from group stays whole.
  Group(const Group&) = default;
  Group& operator=(const Group&) = default;
  // Ranks [first, first + n). The members of equal ranges are one list in the process (every rank of
  // thousands builds the group of all ranks: a list each was quadratic in memory, issue 21).
  static Group range(Rank first, int n);
  int size() const { return static_cast<int>(members_->size()); }
  Rank world_rank(int index) const { return (*members_)[static_cast<std::size_t>(index)]; }
  // Index of a world rank in the group; -1 if it is not a member. O(1) for a range of ranks.
  int index_of(Rank world) const;
  std::span<const Rank> members() const { return *members_; }
  // hash_ranks(members()), computed once: groups are reused call after call, and P members hashed by each of
  // P callers of every collective was quadratic at thousands of workers.
  std::uint64_t hash() const { return hash_; }

 private:
  struct Unique {};  // members known to be distinct: no check
  Group(Unique, std::vector<Rank> members);
  Group(std::shared_ptr<const std::vector<Rank>> members, std::uint64_t hash, Rank first);  // as given
  std::shared_ptr<const std::vector<Rank>> members_;  // never null; shared by copies and equal ranges
  std::uint64_t hash_ = 0;
  Rank first_ = -1;  // members are first_, first_ + 1, ... in order; -1: they are not
};

}  // namespace dts
