#include "sim/nic_shares.hpp"

#include <algorithm>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace dts::sim {

NicShares::NicShares(const RouteTimes& routes)
    : routes_(routes), echo_(simgrid::config::get_value<bool>("network/crosstraffic") ? 0.05 : 0.0) {}

double NicShares::load(const Nic& nic) const {
  return static_cast<double>(nic.flows.size()) + echo_ * static_cast<double>(nic.echoes);
}

void NicShares::settle(Nic& nic, double now) {
  for (Flow* f : nic.flows) {
    f->left = std::max(0.0, f->left - f->rate * (now - f->at));
    f->at = now;
  }
}

void NicShares::rerate(Nic& nic, std::vector<sg4::SemaphorePtr>& tell) const {
  for (Flow* f : nic.flows) {
    const double rate = f->alone_Bps / std::max(load(*f->out), load(*f->in));
    if (rate == f->rate) continue;  // its end stays; each needless wake is a new timer, which may end a rounding late
    f->rate = rate;
    tell.push_back(f->changed);
  }
}

void NicShares::carry(sg4::Host* from, sg4::Host* to, double bytes) {
  const double latency = routes_.latency_s(from, to, bytes);
  sg4::this_actor::sleep_for(latency);
  if (bytes <= 0) return;
  Flow f;
  f.alone_Bps = routes_.alone_Bps(from, to, bytes);  // not bytes / (alone_s - latency): 0 for a tiny flow
  f.left = bytes;
  f.out = &out_[from];
  f.in = &in_[to];
  f.echo_out = &out_[to];
  f.echo_in = &in_[from];
  f.changed = sg4::Semaphore::create(0);
  // The flows whose share changes: those through the four NICs this one loads. Their actors are told once the
  // lists are settled: a notification is a simcall, during which other actors run and change the lists.
  const auto change = [this, &f](auto&& edit) {
    const double now = sg4::Engine::get_clock();
    for (Nic* nic : {f.out, f.in, f.echo_out, f.echo_in}) settle(*nic, now);
    edit();
    std::vector<sg4::SemaphorePtr> tell;
    for (Nic* nic : {f.out, f.in, f.echo_out, f.echo_in}) rerate(*nic, tell);
    for (const auto& s : tell) s->release();
  };
  const auto unlist = [&f] {
    f.out->flows.remove(&f);
    f.in->flows.remove(&f);
    --f.echo_out->echoes;
    --f.echo_in->echoes;
  };
  change([&f] {
    f.at = sg4::Engine::get_clock();
    f.out->flows.push_back(&f);
    f.in->flows.push_back(&f);
    ++f.echo_out->echoes;
    ++f.echo_in->echoes;
  });
  // An actor killed while it waits (the run's end, an error) leaves no flow of its stack in the lists.
  struct Unlist {
    const decltype(unlist)& undo;
    bool done = false;
    ~Unlist() {
      if (!done) undo();
    }
  } listed{unlist};
  for (;;) {  // a release left from a change while this actor ran only makes it look again
    const double end = f.at + f.left / f.rate, now = sg4::Engine::get_clock();
    // Within a rounding of the end: a wait until `end` may return a hair before it.
    if (now >= end || f.left - f.rate * (now - f.at) <= 1e-9 * bytes) break;
    f.changed->acquire_timeout(end - now);
  }
  listed.done = true;
  change(unlist);
}

}  // namespace dts::sim
