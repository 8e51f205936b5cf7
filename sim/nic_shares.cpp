#include "sim/nic_shares.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace dts::sim {

NicShares::NicShares(const RouteTimes& routes) : routes_(routes), mutex_(sg4::Mutex::create()) {}

void NicShares::settle(Nic& nic, double now) {
  for (Flow* f : nic) {
    f->left = std::max(0.0, f->left - f->rate * (now - f->at));
    f->at = now;
  }
}

void NicShares::rerate(Nic& nic, std::vector<sg4::ConditionVariablePtr>& tell) {
  for (Flow* f : nic) {
    f->rate = f->alone_Bps / static_cast<double>(std::max(f->out->size(), f->in->size()));
    tell.push_back(f->changed);
  }
}

void NicShares::carry(sg4::Host* from, sg4::Host* to, double bytes) {
  const double latency = routes_.latency_s(from, to, bytes);
  sg4::this_actor::sleep_for(latency);
  if (bytes <= 0) return;
  Flow f;
  f.alone_Bps = bytes / (routes_.alone_s(from, to, bytes) - latency);
  f.left = bytes;
  f.out = &out_[from];
  f.in = &in_[to];
  f.changed = sg4::ConditionVariable::create();
  // The flows whose share changes: those through either NIC. Their actors are told once the lists are settled:
  // a notification is a simcall, during which other actors run and change the lists.
  const auto change = [&f](auto&& edit) {
    const double now = sg4::Engine::get_clock();
    settle(*f.out, now);
    settle(*f.in, now);
    edit();
    std::vector<sg4::ConditionVariablePtr> tell;
    rerate(*f.out, tell);
    rerate(*f.in, tell);
    for (const auto& cv : tell) cv->notify_all();
  };
  change([&f] {
    f.at = sg4::Engine::get_clock();
    f.out->push_back(&f);
    f.in->push_back(&f);
  });
  // An actor killed while it waits (the run's end, an error) leaves the lists with no flow of its stack in them.
  struct Unlist {
    Flow& f;
    ~Unlist() {
      f.out->remove(&f);
      f.in->remove(&f);
    }
  } unlist{f};
  {
    std::unique_lock<sg4::Mutex> lock(*mutex_);
    for (;;) {
      const double end = f.at + f.left / f.rate, now = sg4::Engine::get_clock();
      // Within a rounding of the end: a wait until `end` may return a hair before it.
      if (now >= end || f.left - f.rate * (now - f.at) <= 1e-9 * bytes) break;
      f.changed->wait_until(lock, end);
    }
  }
  change([&f] {
    f.out->remove(&f);
    f.in->remove(&f);  // and Unlist finds nothing left to remove
  });
}

}  // namespace dts::sim
