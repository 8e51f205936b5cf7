// Message matching with MPI's rules, written once for both backends (sim/sim_world, realexec/mpi_engine);
// the backend supplies transport and time. A message goes to the earliest posted receive that matches it
// (same tag, its sender among the receive's sources), else it waits as unexpected and is taken by the first
// later receive that matches it. Messages of one (source, destination) pair are matched in send order:
// MPI gives that order to the MPI backend; the simulator, whose flows may overtake one another on the wire,
// restores it with InOrder. A receive's buffer must hold exactly the message's count.
// Rounds: a message carries a round beside its tag, and matches only a receive of the same round; once the
// receiver has called drop_stale(tag, r), messages with that tag of a round below r are discarded, those
// queued and those that arrive later, so that late messages of a round given up never wait as unexpected.
// Failed peers (a scenario's failures: a crash on the simulator; modeled on MPI, which cannot survive one without
// ULFM: realexec/mpi_engine.cpp): a receive that accepts a failed rank completes with kPeerFailed, source()
// naming that rank, unless a message that arrived before the failure matches it; pending ones at the failure,
// later ones at once. A receive from a set of ranks fails
// too, as MPI_ANY_SOURCE receives do under ULFM, so that its owner learns of the failure and can post it
// again without that rank.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts::matching {

// What a message carries besides its data.
struct Envelope {
  Rank src = -1;
  Tag tag = 0;
  Round round = 0;
  std::size_t count = 0;  // floats
};

// What a receive accepts.
struct Want {
  std::vector<Rank> srcs;
  Tag tag = 0;
  Round round = 0;
  std::size_t count = 0;  // the receive buffer's size in floats: a message must have exactly this many
};

inline bool matches(const Want& w, const Envelope& e) {
  return w.tag == e.tag && w.round == e.round && std::find(w.srcs.begin(), w.srcs.end(), e.src) != w.srcs.end();
}

// Aborts unless a matched receive's buffer holds the message exactly.
void check_count(const Want& w, const Envelope& e);

// One rank's posted receives (post order) and unexpected messages (arrival order). Recv has a member
// `Want want`, Msg a member `Envelope env`; both are held by shared_ptr, as the backend's requests share them.
template <class Recv, class Msg>
class Matcher {
 public:
  using RecvPtr = std::shared_ptr<Recv>;
  using MsgPtr = std::shared_ptr<Msg>;

  // A message arrives: the earliest posted receive it matches, taken out of the posted list, or null (then
  // the backend queues the message with unexpected()).
  RecvPtr take_receive(const Envelope& env) {
    const auto it =
        std::find_if(posted_.begin(), posted_.end(), [&](const RecvPtr& r) { return matches(r->want, env); });
    if (it == posted_.end()) return nullptr;
    RecvPtr r = std::move(*it);
    posted_.erase(it);
    check_count(r->want, env);
    return r;
  }
  void queue(MsgPtr msg) { unexpected_.push_back(std::move(msg)); }
  // A receive is posted: the earliest unexpected message it matches, taken out of the queue, or null (then
  // the receive is posted, behind the earlier ones).
  MsgPtr post(const RecvPtr& r) {
    const auto it =
        std::find_if(unexpected_.begin(), unexpected_.end(), [&](const MsgPtr& m) { return matches(r->want, m->env); });
    if (it == unexpected_.end()) {
      posted_.push_back(r);
      return nullptr;
    }
    MsgPtr m = std::move(*it);
    unexpected_.erase(it);
    check_count(r->want, m->env);
    return m;
  }
  // Takes a posted receive back (cancel); false if it was not posted (matched already, or never).
  bool withdraw(const Recv& r) {
    return std::erase_if(posted_, [&](const RecvPtr& p) { return p.get() == &r; }) > 0;
  }
  const std::vector<RecvPtr>& posted() const { return posted_; }

  // Peer `r` has failed: the posted receives that accept it, taken out of the posted list, for the backend
  // to complete with kPeerFailed.
  std::vector<RecvPtr> fail(Rank r) {
    failed_.push_back(r);
    std::vector<RecvPtr> out;
    std::erase_if(posted_, [&](RecvPtr& p) {
      if (std::find(p->want.srcs.begin(), p->want.srcs.end(), r) == p->want.srcs.end()) return false;
      out.push_back(std::move(p));
      return true;
    });
    return out;
  }
  // The first failed rank that `w` accepts, or -1.
  Rank failed_source(const Want& w) const {
    for (const Rank r : w.srcs) {
      if (std::find(failed_.begin(), failed_.end(), r) != failed_.end()) return r;
    }
    return -1;
  }
  void clear_unexpected() { unexpected_.clear(); }

  // Messages with `tag` of a round below `before` are stale from now on: those queued are discarded here,
  // and the backend discards those that arrive later (stale()) where it would queue them. (A receive
  // posted for a stale round still takes its message: it says the round is wanted after all.)
  void drop_stale(Tag tag, Round before) {
    const auto it = std::find_if(floors_.begin(), floors_.end(), [&](const auto& f) { return f.first == tag; });
    if (it == floors_.end()) {
      floors_.emplace_back(tag, before);
    } else {
      it->second = std::max(it->second, before);
    }
    std::erase_if(unexpected_, [&](const MsgPtr& m) { return stale(m->env); });
  }
  bool stale(const Envelope& env) const {
    for (const auto& [tag, floor] : floors_) {
      if (tag == env.tag) return env.round < floor;
    }
    return false;
  }

 private:
  std::vector<RecvPtr> posted_;
  std::deque<MsgPtr> unexpected_;
  std::vector<std::pair<Tag, Round>> floors_;  // per tag given to drop_stale: the lowest round still wanted
  std::vector<Rank> failed_;                   // peers that have failed
};

// A sender's stream of messages to one destination with one tag: what MPI's non-overtaking rule orders (a
// message can only match a receive of its own tag, so messages of different tags may overtake each other, as
// MPI's rendezvous transfers do).
using Stream = std::uint64_t;
inline Stream stream_of(Rank src, Tag tag) {
  return (static_cast<Stream>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(tag);
}

// Restores send order per stream at one destination, for a transport that may reorder: the sender numbers
// its messages of each stream 0, 1, 2, ...; arrive() hands them on in that order, holding those that
// overtook an earlier one.
template <class Msg>
class InOrder {
 public:
  using MsgPtr = std::shared_ptr<Msg>;
  // The next sequence number expected on `stream`: messages below it have been handed on.
  std::uint64_t expected(Stream stream) const {
    const auto it = next_.find(stream);
    return it == next_.end() ? 0 : it->second;
  }
  // Message `seq` of `stream` arrives: deliver(msg) for it and for every held successor now in order, or
  // hold(msg) then keeps it if an earlier one is still on the way.
  template <class Hold, class Deliver>
  void arrive(Stream src, std::uint64_t seq, MsgPtr msg, Hold hold, Deliver deliver) {
    auto& expected = next_[src];  // a reference that inserting other senders leaves valid
    if (seq != expected) {
      hold(*msg);
      held_.emplace(std::make_pair(src, seq), std::move(msg));
      return;
    }
    deliver(std::move(msg));
    ++expected;
    for (auto it = held_.find({src, expected}); it != held_.end(); it = held_.find({src, expected})) {
      deliver(std::move(it->second));
      held_.erase(it);
      ++expected;
    }
  }

 private:
  // Per stream that has sent: a destination hears from few of thousands of ranks (a table per sender at
  // every destination was quadratic in memory, issue 21).
  std::unordered_map<Stream, std::uint64_t> next_;
  std::map<std::pair<Stream, std::uint64_t>, MsgPtr> held_;  // arrived out of order
};

}  // namespace dts::matching
