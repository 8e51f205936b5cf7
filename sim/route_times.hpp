// What SimGrid's network model (CM02, LV08 and SMPI: network_cm02.cpp in 3.32) gives one flow between two hosts
// when nothing else crosses its links: its latency, the route's latencies times the model's latency factor,
// then the bytes at the bandwidth factor times the lower of the route's lowest bandwidth and the TCP window's
// bound (network/TCP-gamma / (2 x the route's latency)). Routes are asked for once per pair of hosts, in the
// kernel (SimGrid 3.32's dragonfly routing crashes when called from an actor's stack), and kept: the links'
// later changes (a scenario's windows) are not seen.
#pragma once

#include <map>
#include <simgrid/s4u.hpp>
#include <utility>
#include <vector>

namespace dts::sim {

class RouteTimes {
 public:
  RouteTimes();  // reads the network model's configuration: after the platform is built
  // The flow's latency (the route's, times the model's factor for a flow of `bytes`).
  double latency_s(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const;
  // The rate of a flow of `bytes` alone on the route, once its latency is paid, in bytes per second.
  double alone_Bps(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const;
  // Latency and transfer of `bytes` alone on the route.
  double alone_s(simgrid::s4u::Host* a, simgrid::s4u::Host* b, double bytes) const {
    return latency_s(a, b, bytes) + bytes / alone_Bps(a, b, bytes);
  }

 private:
  struct Route {
    double latency_s = 0;      // the links' sum
    double bandwidth_Bps = 0;  // the lowest of the links'
  };
  const Route& route(simgrid::s4u::Host* a, simgrid::s4u::Host* b) const;

  bool smpi_factors_ = false;  // SimGrid's SMPI and IB models: piecewise factors by message size
  double latency_factor_ = 1, bandwidth_factor_ = 1, tcp_gamma_ = 0;
  std::vector<std::pair<double, double>> smpi_lat_, smpi_bw_;  // (size threshold, factor), ascending
  mutable std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, Route> routes_;
};

}  // namespace dts::sim
