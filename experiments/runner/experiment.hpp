// An experiment file, read strictly (DESIGN.md §5): platform, model, data, algorithm, run length and
// evaluation, seed, and optional variants (each a JSON merge patch over the base, one result directory
// each). Everything is validated, and the data sets read, before anything is written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/model/optimizer.hpp"
#include "sim/collective_sim.hpp"
#include "sim/platform.hpp"

namespace dts::exp {

struct DataSets {
  data::Dataset train, test;  // a modeled set has shapes and counts, no samples
  bool modeled = false;
  nlohmann::json resolved;
};

// One runnable configuration (the base experiment, or one variant of it).
struct Plan {
  std::string experiment;  // the experiment's name
  std::string variant;     // "" when the file has no variants
  std::uint64_t seed = 42;
  sim::PlatformSpec platform;
  std::string model = "mlp";
  std::string backend = "onednn";  // onednn | ref
  bool real = true;
  std::optional<double> step_time_s;
  std::string algorithm;
  RankMain main;
  int workers = 1, ranks = 1, batch = 32;
  model::OptimizerConfig optimizer;
  std::int64_t steps = 0;  // per worker
  std::int64_t eval_every_steps = 0, log_every_steps = 1;
  sim::Fidelity fidelity = sim::Fidelity::kMessage;  // run.fidelity: how the simulator runs collectives
  sim::RingSampling rings;                           // run.ring_flow_budget, run.ring_sample_steps
  std::shared_ptr<const DataSets> data;
  nlohmann::json resolved;  // config.resolved.json
};

// `file` is only used for messages and to resolve relative paths (its directory).
std::vector<Plan> read_experiment(const nlohmann::json& j, const std::string& file);
// Reads the file and applies --set overrides ("algorithm.lr=0.1"; the value is JSON, or a bare string).
std::vector<Plan> load_experiment(const std::string& file, const std::vector<std::string>& sets);
// The SimGrid side of the plans' input, before a simulated run: the --cfg/--log arguments, then each distinct
// platform (its network model, simgrid_config and XML file) built as the run will build it, in a child process
// (sim/preflight.hpp). Throws InputError naming the argument or the platform key. Not for --backend mpi, which
// uses no SimGrid.
void check_simulation(const std::vector<Plan>& plans, const std::vector<std::string>& simgrid_args);

}  // namespace dts::exp
