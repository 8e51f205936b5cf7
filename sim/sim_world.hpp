// Message matching for all ranks of one simulation, MPI-like and eager (as TCP with large socket buffers):
// a send starts its flow at once on the modeled network (a Wires transfer between the two hosts), and on
// arrival the message is matched against the destination's posted receives in post order, or queued as
// unexpected. Messages of one (source, destination, tag) stream are delivered in send order even when a small one
// overtakes a big one on the wire, which gives MPI's non-overtaking rule (as the MPI backend matches them); of
// different tags, which no receive can confuse, the one that arrives first is delivered first, as MPI's
// rendezvous transfers and separate connections let them. Mailboxes are not used: their
// rendezvous semantics would delay a send until the receive is posted (SIMGRID_NOTES.md §2.3).
// A send whose receive is already posted, and certain to be the one it will match, is copied into that
// receive's buffer at once (early delivery): the receiver may not read a pending receive's buffer, so only
// the host's memory traffic changes, and the sender needs no snapshot. The receive still completes on arrival.
#pragma once

#include <cstdint>
#include <memory>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/matching.hpp"
#include "sim/couriers.hpp"
#include "sim/snapshot_pool.hpp"
#include "sim/wire.hpp"

namespace dts::sim {

struct FlowTrace;  // sim/time_account.hpp
class TimeAccount;
class MessageCosts;  // sim/message_costs.hpp

// One posted operation; shared by its Request and, while pending, by the world.
struct OpState {
  bool is_recv = false;
  bool done = false;
  Status status = Status::kOk;
  Rank owner = -1;                   // the rank that waits on it
  Rank source = -1;                  // sender of a completed receive
  matching::Want want;               // receive: acceptable senders, tag, count
  Slice buf;                         // receive: destination buffer
  bool add = false;                  // receive: buf += message
  std::shared_ptr<FlowTrace> trace;  // the message that completed it, for the time account
};

// Thrown out of a failed rank's next call into the world (SimWorld::fail), to end its actors where it
// crashed; sim/launcher.cpp and SimNode catch it. Not a std::exception: algorithms must not catch it.
struct RankGone {};

class SimWorld {
 public:
  // `time_account`: where the simulation's time goes (null: not accounted); `costs`: the host-side costs of
  // messages (null: none). Both outlive the world.
  explicit SimWorld(std::vector<simgrid::s4u::Host*> hosts, TimeAccount* time_account = nullptr,
                    MessageCosts* costs = nullptr);
  TimeAccount* time_account() const { return time_account_; }
  int size() const { return static_cast<int>(boxes_.size()); }
  simgrid::s4u::Host* host(Rank r) const { return boxes_[static_cast<std::size_t>(r)].host; }

  // `borrow`: the sender keeps `data` unchanged until the send completes (SendOptions::borrow); it is copied
  // straight into a receive that is waiting at arrival, and snapshotted only if none is. Either kind of send
  // is delivered early when it can be (see the file comment).
  std::shared_ptr<OpState> post_send(Rank src, Rank dst, Tag tag, ConstSlice data, std::uint64_t bytes,
                                     const SendOptions& opts);
  // `add` (RecvOptions::add): the message is added into `buf` rather than copied over it.
  std::shared_ptr<OpState> post_recv(Rank me, std::vector<Rank> srcs, Tag tag, Slice buf, const RecvOptions& opts);
  void cancel(OpState& op);
  // Rank r is gone from now on, as if it had crashed: every receive that accepts it and no message matches
  // completes with kPeerFailed (algorithms/api/matching.hpp), now or when posted; a send to it completes
  // with kPeerFailed when it would have been delivered (at once if posted from now on); its messages still
  // on the way are lost; its own actors end at their next call into the world (RankGone).
  void fail(Rank r);
  bool failed(Rank r) const { return boxes_[static_cast<std::size_t>(r)].failed; }
  void drop_stale(Rank me, Tag tag, Round before) {
    boxes_[static_cast<std::size_t>(me)].match.drop_stale(tag, before);
  }
  // Blocks the calling actor until `ready()` or until timeout_s of simulated time; returns ready().
  template <typename Pred>
  bool wait_until(Rank me, Pred ready, double timeout_s);

  // Wakes the actors of rank r blocked in wait_until, to re-check their predicates.
  void wake(Rank r) { boxes_[static_cast<std::size_t>(r)].cv->notify_all(); }
  // Host-to-host flows outside post_send (the collective fidelity's).
  Wires& wires() { return wires_; }
  // The actors that carry messages (post_send's) and the collective fidelity's adding flows.
  Couriers& couriers() { return couriers_; }
  // Counts traffic that did not go through post_send (the collective fidelity's aggregated flows).
  void account(Rank src, Rank dst, std::uint64_t bytes, std::uint64_t messages);

  std::uint64_t bytes_sent(Rank r) const { return boxes_[static_cast<std::size_t>(r)].bytes_sent; }
  std::uint64_t bytes_received(Rank r) const { return boxes_[static_cast<std::size_t>(r)].bytes_received; }
  std::uint64_t messages_sent() const { return messages_; }

 private:
  struct Message {
    ~Message() {
      if (pool) pool->give(std::move(data));
    }
    std::shared_ptr<SnapshotPool> pool;  // where the snapshot comes from and returns to
    matching::Envelope env;
    Snapshot data;  // the snapshot (uninitialized allocation, then one parallel copy); null if modeled
    // Instead of a snapshot, valid until arrival: the sender's buffer, or the buffer of the receive it was
    // delivered into early (`early`), which owns it if that receive is cancelled first.
    const float* borrowed = nullptr;
    const OpState* early = nullptr;
    const float* values() const { return data ? data.get() : borrowed; }
    void own();  // snapshot a borrowed buffer: the message outlives its send
    std::uint64_t seq = 0;
    std::shared_ptr<FlowTrace> trace;
  };
  struct Box {
    simgrid::s4u::Host* host = nullptr;
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr cv;
    matching::Matcher<OpState, Message> match;
    matching::InOrder<Message> order;  // restores send order per stream (source and tag)
    std::unordered_map<matching::Stream, std::uint64_t> next_seq_out;  // per (destination, tag) sent to
    std::vector<std::shared_ptr<Message>> early;  // on the way, already delivered into a posted receive
    std::uint64_t bytes_sent = 0, bytes_received = 0;
    std::uint64_t sends = 0;  // messages posted so far: the index of the next one (its noise draw)
    bool failed = false;
  };
  OpState* early_receive(Rank src, Rank dst, const Message& msg);
  void arrive(Rank dst, std::shared_ptr<Message> msg);
  void match_or_queue(Box& box, std::shared_ptr<Message> msg);
  static void complete_recv(OpState& op, const Message& msg);
  static void complete_failed(OpState& op, Rank failed);

  std::vector<Box> boxes_;
  Wires wires_;
  Couriers couriers_;
  TimeAccount* time_account_;
  MessageCosts* costs_;
  std::uint64_t messages_ = 0;
  std::shared_ptr<SnapshotPool> pool_ = std::make_shared<SnapshotPool>();  // shared: messages may outlive the world
};

template <typename Pred>
bool SimWorld::wait_until(Rank me, Pred ready, double timeout_s) {
  Box& box = boxes_[static_cast<std::size_t>(me)];
  std::unique_lock<simgrid::s4u::Mutex> lock(*box.mutex);
  const double deadline = simgrid::s4u::Engine::get_clock() + timeout_s;
  bool done = true;
  // Unlocked by hand, never by the lock's destructor: when the run stops (Actor::kill_all) an actor's next
  // simcall throws, and a throw out of a destructor aborts.
  try {
    while (!ready()) {
      if (box.failed) throw RankGone{};
      if (timeout_s == kForever) {
        box.cv->wait(lock);
      } else if (box.cv->wait_until(lock, deadline) == std::cv_status::timeout) {
        done = ready();
        break;
      }
    }
  } catch (const simgrid::ForcefulKillException&) {
    lock.release();  // killed while waiting: a dying actor does not unlock
    throw;
  } catch (...) {
    lock.release()->unlock();
    throw;
  }
  lock.release()->unlock();
  return done;
}

}  // namespace dts::sim
