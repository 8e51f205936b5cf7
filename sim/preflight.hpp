// The SimGrid side of the input, checked before anything runs (dtsim run, and run --check): the --cfg/--log
// arguments, a platform's network model and simgrid_config items, and its XML file are read by SimGrid, which
// ends the process (abort, exit) on some bad values. Each check does in a child process what run_simulation
// does before the first actor (the Engine with the same arguments, the platform built and sealed), and turns
// a failure into an InputError naming the argument, or the platform key and file, with SimGrid's complaint.
#pragma once

#include <string>
#include <vector>

#include "algorithms/api/scenario.hpp"
#include "sim/platform.hpp"

namespace dts::sim {

// Throws InputError naming the first --cfg=... / --log=... argument that SimGrid refuses.
void check_simgrid_args(const std::vector<std::string>& simgrid_args);

// Throws InputError naming the platform setting that SimGrid refuses ("exp.json:/platform/simgrid_config/..",
// "../xml"), or the platform's own InputError (too few hosts for `ranks`), or a scenario's link that the
// platform does not have (sim/scenario_sim.hpp). Writes nothing: tracing is off.
void check_platform(const PlatformSpec& spec, int ranks, int workers, const std::vector<std::string>& simgrid_args,
                    const Scenario& scenario = {});

}  // namespace dts::sim
