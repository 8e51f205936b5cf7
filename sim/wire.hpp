// A transfer of `bytes` between two hosts that blocks the calling actor until it ends: the flow of
// s4u::Comm::sendto, without its cost at scale. sendto's comm is detached, and SimGrid 3.32 keeps every
// detached comm in one list that each finishing comm is removed from by a linear search (CommImpl::finish);
// with thousands of flows in flight, of which the short ones finish first, that search dominated the run
// (GossipGraD's ring shuffle at 4096 workers). Here each transfer is a mailbox put, attached to its actor,
// to a mailbox whose permanent receiver (an idle daemon on the destination host) makes the flow start at
// once, as sendto's does; the sender then takes its own completed comm back out of the mailbox. Each
// transfer in flight holds a mailbox of its own, recycled afterwards for the same destination (its receiver set
// once: setting it is a simcall).
#pragma once

#include <cstdint>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

namespace dts::sim {

class LinkWindows;

class Wires {
 public:
  // Blocks until `bytes` have crossed from `from` to `to` (different hosts).
  void carry(simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t bytes);

  // The same in two halves, for an actor that works while its flow runs: start() starts the flow (as
  // sendto_async), finish() waits for it and returns the simulated time it ended at.
  struct Transfer {
    simgrid::s4u::Host* to = nullptr;
    simgrid::s4u::Mailbox* box = nullptr;
    simgrid::s4u::CommPtr comm;
  };
  Transfer start(simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t bytes);
  double finish(Transfer& t);

  // Blocks the calling actor, on host `to`, until `bytes` have come from `from` (a minibatch copy).
  void pull(simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t bytes);

  // From now on, flows that cross a link with a window go through `windows` (null: none do). Only carry and
  // pull then: a flow started by start() must not cross such a link.
  void set_windows(LinkWindows* windows) { windows_ = windows; }
  bool windowed() const { return windows_ != nullptr; }

 private:
  simgrid::s4u::Mailbox* take_box(simgrid::s4u::Host* to);  // an idle box whose receiver is on `to`
  // The windowed links a flow from -> to crosses (LinkWindows::crossed); null when it crosses none.
  const std::vector<int>* windowed_links(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
  simgrid::s4u::ActorPtr receiver(simgrid::s4u::Host* host);

  std::unordered_map<simgrid::s4u::Host*, std::vector<simgrid::s4u::Mailbox*>> idle_;
  std::unordered_map<simgrid::s4u::Host*, simgrid::s4u::ActorPtr> receivers_;
  LinkWindows* windows_ = nullptr;
};

}  // namespace dts::sim
