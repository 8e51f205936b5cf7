// The driver's view of its workers (survivors.hpp).
#include "algorithms/mpca/survivors.hpp"

#include "algorithms/mpca/mpca.hpp"

namespace dts::mpca {

Survivors::Survivors(Context& ctx)
    : ctx_(ctx),
      alive_(static_cast<std::size_t>(ctx.workers) + 1, 1),
      done_(static_cast<std::size_t>(ctx.workers) + 1, 0),
      group_(Group::range(0, ctx.workers + 1)) {
  watch_.resize(static_cast<std::size_t>(ctx.workers) + 1);
  for (Rank w = 1; w <= ctx.workers; ++w)
    watch_[static_cast<std::size_t>(w)] = ctx.comm.irecv(w, tags::kMpcaDone, none_);
}

void Survivors::poll() {
  for (Rank w = 1; w <= ctx_.workers; ++w) {
    Request& r = watch_[static_cast<std::size_t>(w)];
    if (!r.valid() || !r.test()) continue;
    const Status s = r.wait();
    r.reset();
    if (s == Status::kPeerFailed) {
      alive_[static_cast<std::size_t>(w)] = 0;
      ++lost_;
      ctx_.recorder.event("worker_lost", {{"worker", static_cast<double>(w)},
                                          {"workers_left", static_cast<double>(ctx_.workers - lost_)}});
      if (!done_[static_cast<std::size_t>(w)]) ++finished_;
      continue;
    }
    require_ok(s, w, "mpca driver");
    done_[static_cast<std::size_t>(w)] = 1;
    ++finished_;
    r = ctx_.comm.irecv(w, tags::kMpcaDone, none_);  // only its failure ends this one
  }
}

bool Survivors::rebuild() {
  if (lost_ == lost_at_rebuild_) return false;
  lost_at_rebuild_ = lost_;
  std::vector<Rank> members = {kDriver};
  for (Rank w = 1; w <= ctx_.workers; ++w) {
    if (alive(w)) members.push_back(w);
  }
  group_ = Group(std::move(members));
  return true;
}

Vec Survivors::members_message() const {
  Vec m(alive_.size(), true);
  for (std::size_t r = 0; r < alive_.size(); ++r) m.data()[r] = alive_[r] != 0 ? 1.0f : 0.0f;
  return m;
}

Group group_of(const Vec& members) {
  std::vector<Rank> ranks;
  for (std::size_t r = 0; r < members.count(); ++r) {
    if (members.data()[r] != 0) ranks.push_back(static_cast<Rank>(r));
  }
  return Group(std::move(ranks));
}

}  // namespace dts::mpca
