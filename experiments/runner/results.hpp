// What every backend writes into a result directory (DESIGN.md §5): config.resolved.json, metrics.csv and
// summary.json, from a plan, its merged metrics and a backend-neutral outcome; and the rank's training setup
// a plan describes. Shared by runner_sim/run_sim.cpp (simulator) and runner_mpi/run_mpi.cpp (MPI), so both
// write the same files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "experiments/runner/metrics.hpp"
#include "kernels/model/trainer.hpp"

namespace dts::exp {

struct RunOutcome {
  std::string clock = "simulated";  // summary.json key <clock>_time_s: "simulated" (sim/) or "wall" (realexec/)
  double time_s = 0;
  std::uint64_t messages = 0;
  std::vector<std::uint64_t> bytes_sent, bytes_received;  // per rank
};

// The Trainer setup of every rank of a plan (servers are the first ranks - workers ranks).
model::TrainerSetup trainer_setup(const Plan& plan);

void write_json(const std::filesystem::path& path, const nlohmann::json& j);
nlohmann::json summary(const Plan& plan, const RunOutcome& outcome, const MetricsLog& log);
// {"dtsim": version, "git": sha}; callers add their engine's version.
nlohmann::json dtsim_versions();
// Creates `dir` and writes config.resolved.json (the plan's, with the keys of `run` added: "versions", and on the
// simulator the "simgrid_args" of the command line), metrics.csv, ranks.csv, waits.csv and summary.json.
void write_results(const std::string& dir, const Plan& plan, const nlohmann::json& run, const MetricsLog& log,
                   const nlohmann::json& summary);

}  // namespace dts::exp
