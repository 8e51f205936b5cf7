// `dtsim run` on the simulator (run_experiment, experiments/runner/run.hpp): one simulation per plan, each in a
// child process (SimGrid allows one engine per process), the result directory published when all are done.
#pragma once

#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "sim/launcher.hpp"

namespace dts::exp {

// The simulation of a plan read with sim_reader(): its platform, ranks, steps, fidelity and algorithm, and each
// rank's SimCompute on its host's device. The caller adds a recorder (and SimGrid arguments); `plan` must outlive
// the job.
sim::SimJob sim_job(const Plan& plan);

// Runs one plan in this process and writes config.resolved.json, metrics.csv and summary.json into `dir`.
// `label` names it on the progress line (Progress::label).
void run_plan(const Plan& plan, const std::string& dir, const std::vector<std::string>& simgrid_args,
              const std::string& label);

}  // namespace dts::exp
