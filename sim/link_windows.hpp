// The scenario's link changes in a time window (`from_s`, `until_s`, `down`) on the simulated network.
// SimGrid 3.32 bounds a flow's rate by its route's lowest bandwidth when it starts, for its whole life, and
// undoing a change while flows cross the link backwards (LV08's cross-traffic) makes their sharing penalties
// negative and aborts. So at each edge of a window the flows crossing (either way) a link that goes down, gets
// faster or changes latency are cancelled, the link changes, and they start again with what they have left to
// send: a flow's bound and penalty are never staler than the links' (a link that gets slower bounds its flows at
// once). A restarted flow pays its route's latency again.
// A link that is down carries nothing: the flows crossing it are cancelled when it goes down and start again
// when it is back up, and a flow that would cross it waits until then.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

#include "algorithms/api/scenario.hpp"

namespace dts::sim {

class LinkWindows {
 public:
  // The windowed changes of `scenario` on the links `named` (scenario_links: one list per change, the
  // whole-run changes applied already). Sets the links as they are at time 0 and starts a daemon on `host`
  // that plays the later edges.
  LinkWindows(const Scenario& scenario, const std::vector<std::vector<simgrid::s4u::Link*>>& named,
              simgrid::s4u::Host* host);
  LinkWindows(const LinkWindows&) = delete;
  LinkWindows& operator=(const LinkWindows&) = delete;

  // The windowed links (indices) that a flow from -> to crosses: on its route, or with cross-traffic on its
  // route back. Empty: it crosses none.
  const std::vector<int>& crossed(simgrid::s4u::Host* from, simgrid::s4u::Host* to);

  // Blocks until `bytes` have crossed `links` (from crossed()): start(n) starts a comm carrying n bytes; when an
  // edge cancels it, cancelled() tidies up after the comm and start() is called again with what was left.
  void carry(const std::vector<int>& links, std::uint64_t bytes,
             const std::function<simgrid::s4u::CommPtr(std::uint64_t)>& start, const std::function<void()>& cancelled);

 private:
  struct Watched {
    simgrid::s4u::Link* link = nullptr;
    double bandwidth = 0, latency = 0;                // before any window
    double bandwidth_factor = 1, latency_factor = 1;  // the windows' now
    bool down = false;
  };
  struct Change {
    int link = 0;
    double from_s = 0, until_s = kNever;
    double bandwidth = 1, latency = 1;
    bool down = false;
  };
  struct Flow {
    const std::vector<int>* links = nullptr;
    simgrid::s4u::CommPtr comm;
    std::uint64_t left = 0;
    bool cancelled = false;  // by an edge; its sender has not started it again yet
  };

  void play(std::vector<double> edges);  // the daemon
  void apply(double at_s);               // every link as it is at at_s
  bool blocked(const Flow& f) const;     // it would cross a link that is down

  std::vector<Watched> watched_;
  std::vector<Change> changes_;
  std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, std::vector<int>> crossed_;
  bool cross_traffic_ = true;
  std::list<Flow*> flows_;  // in the order they began: edges cancel in a reproducible order
  bool busy_ = false;       // an edge is being played
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr changed_;
};

}  // namespace dts::sim
