#include "sim/route_times.hpp"

#include <algorithm>
#include <limits>
#include <simgrid/simix.hpp>
#include <sstream>
#include <string>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

// "65472:11.6436;15424:3.48845;...;0:2.01467" -> ascending (threshold, factor).
std::vector<std::pair<double, double>> parse_factors(const std::string& text) {
  std::vector<std::pair<double, double>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) continue;
    out.emplace_back(std::stod(item.substr(0, colon)), std::stod(item.substr(colon + 1)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// SimGrid's piecewise rule: the factor of the largest threshold strictly below the size, 1 below all.
double factor_for(const std::vector<std::pair<double, double>>& factors, double bytes) {
  double f = 1.0;
  for (const auto& [threshold, value] : factors) {
    if (bytes <= threshold) break;
    f = value;
  }
  return f;
}

}  // namespace

RouteTimes::RouteTimes() {
  const std::string model = simgrid::config::get_value<std::string>("network/model");
  smpi_factors_ = model == "SMPI" || model == "IB";
  if (smpi_factors_) {
    smpi_lat_ = parse_factors(simgrid::config::get_value<std::string>("smpi/lat-factor"));
    smpi_bw_ = parse_factors(simgrid::config::get_value<std::string>("smpi/bw-factor"));
  } else {
    latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
    bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
  }
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
}

const RouteTimes::Route& RouteTimes::route(sg4::Host* a, sg4::Host* b) const {
  auto [it, fresh] = routes_.try_emplace({a, b});
  if (fresh) {
    it->second = simgrid::kernel::actor::simcall_answered([a, b] {
      std::vector<sg4::Link*> links;
      Route r;
      a->route_to(b, links, &r.latency_s);
      r.bandwidth_Bps = std::numeric_limits<double>::infinity();
      for (const sg4::Link* l : links) r.bandwidth_Bps = std::min(r.bandwidth_Bps, l->get_bandwidth());
      return r;
    });
  }
  return it->second;
}

double RouteTimes::latency_s(sg4::Host* a, sg4::Host* b, double bytes) const {
  return route(a, b).latency_s * (smpi_factors_ ? factor_for(smpi_lat_, bytes) : latency_factor_);
}

double RouteTimes::alone_Bps(sg4::Host* a, sg4::Host* b, double bytes) const {
  const Route& r = route(a, b);
  double bound = r.bandwidth_Bps;
  if (r.latency_s > 0 && tcp_gamma_ > 0) bound = std::min(bound, tcp_gamma_ / (2.0 * r.latency_s));
  return bound * (smpi_factors_ ? factor_for(smpi_bw_, bytes) : bandwidth_factor_);
}

}  // namespace dts::sim
