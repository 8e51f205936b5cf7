// The scenario's failures and link changes, played by daemon actors.
#include "sim/scenario_sim.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "core/errors.hpp"
#include "sim/actor_stack.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

// The links on every route from `me` to the other ranks' hosts, and on every route from them to it.
std::vector<sg4::Link*> private_links(sg4::Host* me, const std::vector<sg4::Host*>& hosts) {
  std::vector<sg4::Link*> out;
  for (const bool outbound : {true, false}) {
    std::set<sg4::Link*> common;
    bool first = true;
    for (sg4::Host* other : std::set<sg4::Host*>(hosts.begin(), hosts.end())) {
      if (other == me) continue;
      std::vector<sg4::Link*> route;
      double latency = 0;
      (outbound ? me : other)->route_to(outbound ? other : me, route, &latency);
      const std::set<sg4::Link*> here(route.begin(), route.end());
      if (first) {
        common = here;
        first = false;
      } else {
        std::set<sg4::Link*> both;
        std::set_intersection(common.begin(), common.end(), here.begin(), here.end(), std::inserter(both, both.end()));
        common = both;
      }
    }
    for (sg4::Link* l : common) {
      if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    }
  }
  std::sort(out.begin(), out.end(), [](sg4::Link* a, sg4::Link* b) { return a->get_name() < b->get_name(); });
  return out;
}

}  // namespace

std::vector<std::vector<sg4::Link*>> scenario_links(const Scenario& scenario, const std::vector<sg4::Host*>& hosts) {
  std::vector<std::vector<sg4::Link*>> out;
  for (std::size_t i = 0; i < scenario.links.size(); ++i) {
    const LinkChange& c = scenario.links[i];
    const std::string where = scenario.where + "/links/" + std::to_string(i);
    std::vector<sg4::Link*> links;
    for (const std::string& name : c.links) {
      sg4::Link* l = sg4::Engine::get_instance()->link_by_name_or_null(name);
      if (l == nullptr) throw InputError(where + "/links", "the platform has no link \"" + echo(name) + "\"");
      links.push_back(l);
    }
    const std::set<sg4::Host*> distinct(hosts.begin(), hosts.end());
    for (const Rank r : c.nic_of) {
      if (distinct.size() < 3) {
        throw InputError(where + "/nic_of",
                         "a rank's own links are those on all its routes to two or more other "
                         "hosts, and this run has " +
                             std::to_string(distinct.size()) + " hosts");
      }
      const std::vector<sg4::Link*> own = private_links(hosts[static_cast<std::size_t>(r)], hosts);
      if (own.empty()) {
        throw InputError(where + "/nic_of",
                         "rank " + std::to_string(r) + "'s host has no link of its own on this platform");
      }
      links.insert(links.end(), own.begin(), own.end());
    }
    out.push_back(std::move(links));
  }
  return out;
}

std::unique_ptr<LinkWindows> start_scenario(const Scenario& scenario, SimWorld& world,
                                            const std::vector<sg4::Host*>& hosts) {
  // Daemons: none of them keeps the simulation going once the ranks are done.
  for (const RankEvent& f : scenario.failures) {
    start_actor("fail-" + std::to_string(f.rank), hosts[static_cast<std::size_t>(f.rank)], kCourierStackKiB,
                [&world, f] {
                  sg4::this_actor::sleep_until(f.at_s);
                  world.fail(f.rank);
                })
        ->daemonize();
  }
  if (scenario.links.empty()) return nullptr;
  sg4::Engine::get_instance()->seal_platform();  // routes are known once sealed (engine.run() would seal it)
  // Each link once, with the product of the factors of the changes that name it.
  struct Factors {
    sg4::Link* link = nullptr;
    double bandwidth = 1, latency = 1;
  };
  std::map<std::string, Factors> factors;  // by name: a fixed order
  const std::vector<std::vector<sg4::Link*>> named = scenario_links(scenario, hosts);
  for (std::size_t i = 0; i < named.size(); ++i) {
    if (scenario.links[i].windowed()) continue;
    for (sg4::Link* l : std::set<sg4::Link*>(named[i].begin(), named[i].end())) {
      Factors& f = factors[l->get_name()];
      f.link = l;
      f.bandwidth *= scenario.links[i].bandwidth_factor;
      f.latency *= scenario.links[i].latency_factor;
    }
  }
  for (const auto& [name, f] : factors) {
    if (f.bandwidth != 1) f.link->set_bandwidth(f.link->get_bandwidth() * f.bandwidth);
    if (f.latency != 1) f.link->set_latency(f.link->get_latency() * f.latency);
  }
  if (!scenario.has_link_windows()) return nullptr;
  auto windows = std::make_unique<LinkWindows>(scenario, named, hosts.front());
  world.wires().set_windows(windows.get());
  return windows;
}

}  // namespace dts::sim
