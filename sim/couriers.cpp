// Couriers: reusable actors for one job at a time.
#include "sim/couriers.hpp"

#include <simgrid/simix.hpp>
#include <utility>

#include "sim/actor_stack.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

void Couriers::run(sg4::Host* host, std::function<void()> job) {
  if (holders_ <= 0) {
    start_actor("courier", host, kCourierStackKiB, std::move(job));
    return;
  }
  std::vector<Courier*>& idle = idle_[host];
  if (idle.empty()) {
    Courier& c = couriers_.emplace_back();
    c.host = host;
    c.wake = sg4::Semaphore::create(0);
    c.job = std::move(job);
    start_actor("courier", host, kCourierStackKiB, [this, &c] { serve(c); });
    return;
  }
  Courier* c = idle.back();  // the most recently used stack
  idle.pop_back();
  c->idle = false;
  c->job = std::move(job);
  c->wake->release();
}

void Couriers::serve(Courier& c) {
  for (;;) {
    std::exchange(c.job, nullptr)();  // the job and its captures end here, as with an actor's end
    if (holders_ <= 0) return;
    c.idle = true;
    idle_[c.host].push_back(&c);
    c.wake->acquire();
    if (!c.job) return;  // released: the ranks are done
  }
}

void Couriers::release() {
  if (--holders_ > 0) return;
  idle_.clear();
  // One simcall for all: each idle courier wakes with no job and ends.
  simgrid::kernel::actor::simcall_answered([this] {
    for (Courier& c : couriers_) {
      if (c.idle) {
        c.idle = false;
        c.wake->release();
      }
    }
  });
}

}  // namespace dts::sim
