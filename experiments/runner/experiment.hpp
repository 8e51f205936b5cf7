// An experiment file, read strictly (DESIGN.md §5): platform, model, data, algorithm, run length and
// evaluation, seed, and optional variants (each a JSON merge patch over the base, one result directory
// each). Everything is validated, and the data sets read, before anything is written. A plan names no backend:
// the simulator's part of it (the platform, the fidelity) is read by the reader the caller gives, and kept
// opaque (simulator_input.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.hpp"
#include "algorithms/api/scenario.hpp"
#include "experiments/runner/simulator_input.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/model/optimizer.hpp"

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
  std::shared_ptr<const SimulatorPart> simulator;  // the platform section, run.fidelity and run.ring_*
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
  bool eval_replicas = false;  // run.eval_replicas
  // run.measure_from_step: summary.json's "window" measures steps (measure_from_step, steps] (0: no window).
  std::int64_t measure_from_step = 0;
  std::shared_ptr<const DataSets> data;
  std::shared_ptr<const Scenario> scenario;  // never null; empty without a scenario section
  nlohmann::json resolved;                   // config.resolved.json
};

// Data sets read so far, by their section and seed: the variants of one experiment, or every point of a sweep,
// read each set once.
using DataCache = std::map<std::string, std::shared_ptr<const DataSets>>;

// `file` is only used for messages and to resolve relative paths (its directory). `simulator` reads the
// simulator's part of each plan. `sets` (--set, already applied to `j`) are applied again over each variant's
// keys, so that the command line beats the file.
// `cache`: data sets to reuse and add to (null: this experiment's own).
std::vector<Plan> read_experiment(const nlohmann::json& j, const std::string& file, const SimulatorReader& simulator,
                                  const std::vector<std::string>& sets = {}, DataCache* cache = nullptr);
// Reads the file and applies --set overrides ("algorithm.lr=0.1"; the value is JSON, or a bare string), to the
// file and then to each variant.
std::vector<Plan> load_experiment(const std::string& file, const std::vector<std::string>& sets,
                                  const SimulatorReader& simulator, DataCache* cache = nullptr);

}  // namespace dts::exp
