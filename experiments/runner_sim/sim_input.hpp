// The simulator's part of a plan (experiments/runner/simulator_input.hpp) as the simulator reads it: the platform
// (sim/platform.hpp), how collectives are simulated (run.fidelity, run.ring_flow_budget, run.ring_sample_steps),
// and the timeline it writes (run.trace).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "sim/collective_sim.hpp"
#include "sim/platform.hpp"

namespace dts::exp {

struct SimInput final : SimulatorPart {
  sim::PlatformSpec platform;
  sim::Fidelity fidelity = sim::Fidelity::kMessage;  // run.fidelity: how the simulator runs collectives
  sim::RingSampling rings;                           // run.ring_flow_budget, run.ring_sample_steps
  sim::LineRoundTiming lines;                        // run.line_round_budget, _groups, _timing
  std::string trace = "none";                        // run.trace: none | chrome | paje
  const nlohmann::json& resolved_platform() const override { return platform.resolved; }
};

// Reads the simulator's part of each plan into a SimInput.
const SimulatorReader& sim_reader();

// The SimInput of a plan read with sim_reader().
const SimInput& sim_input(const Plan& plan);

// The SimGrid side of the plans' input, before a simulated run: the --cfg/--log arguments, then each distinct
// platform (its network model, simgrid_config and XML file) built as the run will build it, in a child process
// (sim/preflight.hpp). Throws InputError naming the argument or the platform key. Not for --backend mpi, which
// uses no SimGrid.
void check_simulation(const std::vector<Plan>& plans, const std::vector<std::string>& simgrid_args);

}  // namespace dts::exp
