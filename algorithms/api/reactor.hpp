// Many pending requests, each with what to do when it completes: the event loop of an activity that serves
// several exchanges at once, as an actor serves its mailbox (BIDMach's dimension loop). Handlers run inside
// run_one and may post and cancel requests.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/api/comm.hpp"

namespace dts {

class Reactor {
 public:
  using Handler = std::function<void(const Comm::Completion&)>;
  using Ticket = std::uint64_t;

  explicit Reactor(Comm& comm) : comm_(comm) {}
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // `handler` runs once `request` completes (with its status: a receive from a failed peer too). An urgent
  // request is served before the others that have completed (an actor's control messages before its data).
  Ticket post(Request request, Handler handler, bool urgent = false);
  // Cancels a pending request; its handler never runs. A ticket whose request has completed is ignored.
  void cancel(Ticket ticket);
  std::size_t pending() const { return pending_; }
  // Waits for one pending request (at least one must be) and runs its handler; false when timeout_s passed
  // first. Completed requests are served urgent ones first, then round robin over their slots from the slot
  // after the last served (slots are reused last-freed first, so the order is the same run after run).
  bool run_one(double timeout_s = kForever);

 private:
  Comm& comm_;
  std::vector<Request> requests_;
  std::vector<Handler> handlers_;
  std::vector<bool> urgent_;
  std::vector<Ticket> tickets_;    // per slot; 0: free
  std::vector<std::size_t> free_;  // free slots, reused last-freed first
  std::size_t pending_ = 0, next_slot_ = 0;
  Ticket next_ = 1;
};

}  // namespace dts
