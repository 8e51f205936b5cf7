// Couriers: the short-lived actors that carry one message or one flow each (SimWorld::post_send, CollectiveSim's
// adding flows), kept for reuse while the ranks run. Starting an actor per job callocs its stack: at 4,096
// GossipGraD workers (two messages per worker and step) that zeroing, its page faults and the malloc
// consolidation a large request triggers took about a fifth of the run.
//
// run() hands the job to an idle courier of the host by releasing the courier's semaphore: one simcall, like
// the actor start it replaces, and SimGrid appends the woken courier to its run list where it would have
// appended a new actor (SemaphoreImpl::release answers the waiter at once), so the events of one instant keep
// their order. A courier that finishes its job goes idle (a blocking acquire, where a fresh actor would
// exit: neither schedules anything). Idle couriers would look like a deadlock to the engine, so reuse is on
// only between open(holders) and the last holder's release(): then idle couriers end, busy ones end after
// their job, and run() starts an actor per job again, as it does when never opened (a bare SimWorld).
#pragma once

#include <deque>
#include <functional>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

namespace dts::sim {

class Couriers {
 public:
  // Runs `job` on an actor of `host` from now on, as start_actor would; the caller is an actor.
  void run(simgrid::s4u::Host* host, std::function<void()> job);
  // Reuse couriers until `holders` calls of release().
  void open(int holders) { holders_ = holders; }
  void release();

 private:
  struct Courier {
    simgrid::s4u::Host* host = nullptr;
    simgrid::s4u::SemaphorePtr wake;
    std::function<void()> job;  // empty when woken: end
    bool idle = false;
  };
  void serve(Courier& c);

  int holders_ = 0;
  std::deque<Courier> couriers_;  // stable addresses; every courier started while open, in start order
  std::unordered_map<simgrid::s4u::Host*, std::vector<Courier*>> idle_;
};

}  // namespace dts::sim
