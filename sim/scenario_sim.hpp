// A scenario's events on the simulated platform (algorithms/api/scenario.hpp): failures mark ranks failed in
// the world at their time; link changes for the whole run scale the links' bandwidth and latency before the
// first flow, and those in a window are played by LinkWindows. Compute stragglers and jitter are not here:
// SimCompute charges Scenario::stretch of its time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "algorithms/api/scenario.hpp"
#include "sim/link_windows.hpp"
#include "sim/sim_world.hpp"

namespace dts::sim {

// The links each of the scenario's link changes names, in order: by name, or the links private to a rank's host
// (on every route from it to the other ranks' hosts, or from them to it). Throws InputError naming the
// change (scenario.where + "/links/i") for an unknown link or a rank whose host has no private link.
std::vector<std::vector<simgrid::s4u::Link*>> scenario_links(const Scenario& scenario,
                                                             const std::vector<simgrid::s4u::Host*>& hosts);

// Applies the link changes and starts the daemons that play the failures and the link windows (after the
// platform is built). The windows, if any, are returned: they must outlive the run (the world's wires use them).
std::unique_ptr<LinkWindows> start_scenario(const Scenario& scenario, SimWorld& world,
                                            const std::vector<simgrid::s4u::Host*>& hosts);

}  // namespace dts::sim
