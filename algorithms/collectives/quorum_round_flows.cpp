// QuorumRound through a backend's line round (LineRoundPart): my scatter and my reduced block as two requests
// of the part, and the two quorums as two more, on the same Reactor as the message version's handlers. The
// round's rules stay here: what a reduction charges and counts, what completion takes from my own copy, force().
#include <algorithm>
#include <utility>

#include "algorithms/collectives/quorum_allreduce.hpp"

namespace dts::collectives {

void QuorumRound::start_flows() {
  sending_ += 2;  // my scatter, and my reduced block
  reactor_->post(part_->scatter(), [this](const Comm::Completion&) { --sending_; });
  reactor_->post(part_->reduced_delivered(), [this](const Comm::Completion&) { --sending_; });
  post_reduce_due();
  complete_due_ = reactor_->post(part_->complete_due(), [this](const Comm::Completion&) {
    complete_due_ = 0;
    complete_flows(need_complete_);
    check_retired();
  });
}

// The next group of my block not yet reduced: when its quorum is in, reduce it.
void QuorumRound::post_reduce_due() {
  reduce_due_ = reactor_->post(part_->reduce_due(reduced_group_), [this](const Comm::Completion&) {
    reduce_due_ = 0;
    reduce_group(need_reduce_);
    if (reduced_group_ < part_->groups()) post_reduce_due();
    check_retired();
  });
}

// Every chunk of the group at once, from the contributions it holds now, at most `quorum` of them: the message
// version counts contributions one at a time and reduces a chunk at its quorum (reduce(), for the group's chunks).
void QuorumRound::reduce_group(std::size_t quorum) {
  const std::size_t g = reduced_group_++, groups = part_->groups();
  const std::size_t held = std::min(part_->contributions(g), quorum);
  const std::size_t first = LineRoundPart::group_begin(reduced_.size(), groups, g);
  const std::size_t last = LineRoundPart::group_begin(reduced_.size(), groups, g + 1);
  std::size_t floats = 0;
  for (std::size_t c = first; c < last; ++c) {
    floats += chunk(me_, c).count;
    reduced_[c] = true;
  }
  if (compute_ != nullptr && floats > 0) {
    if (held > 1) compute_->charge_reduce(floats * (held - 1), 3);
    compute_->charge_reduce(floats, 2);
  }
  if (held < static_cast<std::size_t>(p_)) counts_.short_reduced += last - first;
  mine_reduced_ += last - first;
  part_->send_reduced(g);
}

// With the reduced chunks held now, at most `quorum` of them (the message version completes at its quorum).
void QuorumRound::complete_flows(std::size_t quorum) {
  completed_ = true;
  const std::size_t held = std::min(part_->held_chunks(), quorum);
  counts_.missing = held < counts_.chunks ? counts_.chunks - held : 0;
  on_complete_(out_);  // modeled: nothing to take from my own copy
}

}  // namespace dts::collectives
