// `dtsim run`: validates an experiment, runs each of its configurations in a child process (SimGrid
// allows one engine per process), and publishes the result directory atomically: it appears complete, or
// not at all.
#pragma once

#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"

namespace dts::exp {

struct RunOptions {
  std::string experiment_file;
  std::string out_dir;                    // default: results/<experiment name>
  std::vector<std::string> sets;          // --set key.path=value
  std::vector<std::string> simgrid_args;  // --cfg=... / --log=...
};

// Returns the process exit code: 0, 1 (a run failed) or 2 (bad input). Throws ConfigError for bad input
// found before anything runs.
int run_experiment(const RunOptions& opt);

// Runs one plan in this process and writes config.resolved.json, metrics.csv and summary.json into `dir`.
void run_plan(const Plan& plan, const std::string& dir, const std::vector<std::string>& simgrid_args);

}  // namespace dts::exp
