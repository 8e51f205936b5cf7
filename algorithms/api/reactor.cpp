// Reactor: a slot per pending request, waited together with Comm::wait_any.
#include "algorithms/api/reactor.hpp"

#include <utility>

namespace dts {

Reactor::Ticket Reactor::post(Request request, Handler handler, bool urgent) {
  DTS_ASSERT(request.valid(), "Reactor::post: an empty request");
  std::size_t slot = requests_.size();
  if (free_.empty()) {
    requests_.emplace_back();
    handlers_.emplace_back();
    urgent_.push_back(false);
    tickets_.push_back(0);
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  requests_[slot] = std::move(request);
  handlers_[slot] = std::move(handler);
  urgent_[slot] = urgent;
  tickets_[slot] = next_;
  ++pending_;
  return next_++;
}

void Reactor::cancel(Ticket ticket) {
  for (std::size_t slot = 0; slot < tickets_.size(); ++slot) {
    if (tickets_[slot] != ticket) continue;
    requests_[slot].cancel();
    requests_[slot].reset();
    handlers_[slot] = nullptr;
    tickets_[slot] = 0;
    free_.push_back(slot);
    --pending_;
    return;
  }
}

bool Reactor::run_one(double timeout_s) {
  DTS_ASSERT(pending_ > 0, "Reactor::run_one: nothing pending");
  Comm::Completion c;
  // Urgent requests first, then round robin over the slots from the one after the last served, so that a
  // request that completes again and again (a stream of messages) cannot starve the others; block only when none
  // is complete.
  const std::size_t n = requests_.size();
  c.index = n;
  for (const bool urgent : {true, false}) {
    for (std::size_t i = 0; i < n && c.index == n; ++i) {
      const std::size_t slot = (next_slot_ + i) % n;
      if ((!urgent || urgent_[slot]) && requests_[slot].valid() && requests_[slot].test()) {
        c = {slot, requests_[slot].source(), requests_[slot].wait(0)};
        requests_[slot].reset();
      }
    }
  }
  if (c.index == n) c = comm_.wait_any(requests_, timeout_s);
  if (c.index == n) return false;
  next_slot_ = c.index + 1;
  Handler handler = std::move(handlers_[c.index]);
  handlers_[c.index] = nullptr;
  tickets_[c.index] = 0;
  free_.push_back(c.index);
  --pending_;
  handler(c);
  return true;
}

}  // namespace dts
