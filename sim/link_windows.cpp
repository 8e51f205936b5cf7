// LinkWindows: the edges of windowed link changes, played by a daemon; flows cancelled and started again.
#include "sim/link_windows.hpp"

#include <algorithm>
#include <mutex>
#include <set>
#include <xbt/config.hpp>

#include "sim/actor_stack.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

LinkWindows::LinkWindows(const Scenario& scenario, const std::vector<std::vector<sg4::Link*>>& named, sg4::Host* host)
    : cross_traffic_(simgrid::config::get_value<bool>("network/crosstraffic")),
      mutex_(sg4::Mutex::create()),
      changed_(sg4::ConditionVariable::create()) {
  std::vector<double> edges;
  for (std::size_t i = 0; i < scenario.links.size(); ++i) {
    const LinkChange& c = scenario.links[i];
    if (!c.windowed()) continue;
    for (sg4::Link* l : std::set<sg4::Link*>(named[i].begin(), named[i].end())) {
      auto it = std::find_if(watched_.begin(), watched_.end(), [l](const Watched& w) { return w.link == l; });
      if (it == watched_.end()) {
        Watched w;
        w.link = l;
        w.bandwidth = l->get_bandwidth();
        w.latency = l->get_latency();
        it = watched_.insert(watched_.end(), w);
      }
      Change x;
      x.link = static_cast<int>(it - watched_.begin());
      x.from_s = c.from_s;
      x.until_s = c.until_s;
      x.bandwidth = c.bandwidth_factor;
      x.latency = c.latency_factor;
      x.down = c.down;
      changes_.push_back(x);
    }
    if (c.from_s > 0) edges.push_back(c.from_s);
    if (c.until_s != kNever) edges.push_back(c.until_s);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  apply(0);  // before the first flow
  if (!edges.empty()) {
    start_actor("link-windows", host, kCourierStackKiB, [this, edges] { play(edges); })->daemonize();
  }
}

const std::vector<int>& LinkWindows::crossed(sg4::Host* from, sg4::Host* to) {
  auto [it, fresh] = crossed_.try_emplace({from, to});
  if (!fresh) return it->second;
  std::vector<sg4::Link*> route;
  from->route_to(to, route, nullptr);
  if (cross_traffic_) to->route_to(from, route, nullptr);
  for (std::size_t i = 0; i < watched_.size(); ++i) {
    if (std::find(route.begin(), route.end(), watched_[i].link) != route.end())
      it->second.push_back(static_cast<int>(i));
  }
  return it->second;
}

bool LinkWindows::blocked(const Flow& f) const {
  return std::any_of(f.links->begin(), f.links->end(), [this](int i) { return watched_[i].down; });
}

void LinkWindows::carry(const std::vector<int>& links, std::uint64_t bytes,
                        const std::function<sg4::CommPtr(std::uint64_t)>& start,
                        const std::function<void()>& cancelled) {
  Flow f;
  f.links = &links;
  f.left = bytes;
  flows_.push_back(&f);
  struct Unlist {  // also when the actor is killed
    std::list<Flow*>& flows;
    std::list<Flow*>::iterator it;
    ~Unlist() { flows.erase(it); }
  } unlist{flows_, std::prev(flows_.end())};
  for (;;) {
    {
      std::unique_lock<sg4::Mutex> lock(*mutex_);
      while (busy_ || blocked(f)) changed_->wait(lock);
    }
    const sg4::CommPtr comm = start(f.left);  // held here: the edge only reads f.comm
    f.comm = comm;
    try {
      comm->wait();
      return;
    } catch (const simgrid::NetworkFailureException&) {
      if (!f.cancelled) throw;
      f.cancelled = false;
      cancelled();
    }
  }
}

void LinkWindows::play(std::vector<double> edges) {
  for (const double at : edges) {
    sg4::this_actor::sleep_until(at);
    apply(at);
  }
}

void LinkWindows::apply(double at_s) {
  struct State {
    double bandwidth = 1, latency = 1;  // factors
    bool down = false;
    bool operator==(const State&) const = default;
  };
  std::vector<State> next(watched_.size());
  for (const Change& c : changes_) {
    if (c.from_s > at_s || c.until_s <= at_s) continue;
    State& n = next[static_cast<std::size_t>(c.link)];
    n.bandwidth *= c.bandwidth;
    n.latency *= c.latency;
    n.down = n.down || c.down;
  }
  // The flows to cancel: those crossing a link that goes down, or whose bandwidth rises (their bound is the old
  // one), or whose latency changes (SimGrid moves the penalty of the flows crossing it backwards too). A
  // bandwidth that falls needs no restart: the link's share bounds its flows at once.
  std::vector<bool> changing(watched_.size()), restart(watched_.size());
  for (std::size_t i = 0; i < watched_.size(); ++i) {
    const Watched& w = watched_[i];
    const State& n = next[i];
    changing[i] = !(State{w.bandwidth_factor, w.latency_factor, w.down} == n);
    restart[i] = (n.down && !w.down) || n.bandwidth > w.bandwidth_factor || n.latency != w.latency_factor;
  }
  busy_ = true;  // flows that start from here on wait until the links have changed
  for (Flow* f : flows_) {
    if (f->cancelled || !f->comm || f->comm->get_state() != sg4::Activity::State::STARTED) continue;
    if (std::none_of(f->links->begin(), f->links->end(), [&](int i) { return restart[static_cast<std::size_t>(i)]; }))
      continue;
    f->left = static_cast<std::uint64_t>(f->comm->get_remaining());
    f->cancelled = true;
    f->comm->cancel();
  }
  for (std::size_t i = 0; i < watched_.size(); ++i) {
    if (!changing[i]) continue;
    Watched& w = watched_[i];
    if (w.bandwidth_factor != next[i].bandwidth) w.link->set_bandwidth(w.bandwidth * next[i].bandwidth);
    if (w.latency_factor != next[i].latency) w.link->set_latency(w.latency * next[i].latency);
    w.bandwidth_factor = next[i].bandwidth;
    w.latency_factor = next[i].latency;
    w.down = next[i].down;
  }
  busy_ = false;
  changed_->notify_all();
}

}  // namespace dts::sim
