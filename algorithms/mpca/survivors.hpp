// The driver's view of its workers (papers/mpca_sgd.md §4.9: a worker dies while the driver lives, the
// surviving agents are re-bound, training goes on with K - 1). A receive per worker on kMpcaDone says when it
// has taken its last step; after that a second one, which no message matches, stays posted, so that a failure
// ends it (`peer failed`) whenever it comes. The group of the collectives (the driver, then the live workers in
// rank order: the tree and the swarm are rebuilt over them) changes only between collectives, when the driver
// rebuilds it and announces it with the next job.
#pragma once

#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/api/group.hpp"

namespace dts::mpca {

class Survivors {
 public:
  explicit Survivors(Context& ctx);
  // Takes the news: workers done, workers lost.
  void poll();
  int finished() const { return finished_; }  // done or lost
  int lost() const { return lost_; }
  bool alive(Rank w) const { return alive_[static_cast<std::size_t>(w)] != 0; }
  int live() const { return static_cast<int>(group_.size()) - 1; }
  // The collectives' group as last rebuilt.
  const Group& group() const { return group_; }
  // Rebuilds the group if a worker was lost since the last rebuild; returns whether it did.
  bool rebuild();
  // The membership message (one float per rank, 1: in the group): members_message()[r].
  Vec members_message() const;

 private:
  Context& ctx_;
  std::vector<Request> watch_;
  std::vector<char> alive_, done_;
  Vec none_{0, true};
  Group group_;
  int finished_ = 0, lost_ = 0, lost_at_rebuild_ = 0;
};

// A worker's group from a membership message.
Group group_of(const Vec& members);

}  // namespace dts::mpca
