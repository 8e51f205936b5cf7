// Strict reading of an experiment's `scenario` section (README "Scenarios"): an object, or the name of a scenario
// file (relative to the experiment; reusable ones are in platforms/scenarios/) holding one. Ranks are checked
// against the run's ranks and a `fraction` of the workers is drawn from the scenario's seed here, so that
// config.resolved.json records which ranks it names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "algorithms/algorithm.hpp"
#include "algorithms/api/scenario.hpp"
#include "core/config_reader.hpp"

namespace dts::exp {

struct ScenarioShape {
  int ranks = 1, workers = 1;  // workers are the last `workers` ranks
  std::uint64_t seed = 0;      // the experiment's seed, the scenario's default
  const AlgorithmSpec* algorithm = nullptr;
};

// `root` is the experiment's root reader, which has a "scenario" key; `base_dir` resolves a scenario file's name.
// The resolved scenario (ranks drawn, defaults filled in) goes to `resolved`.
std::shared_ptr<const Scenario> read_scenario(ConfigReader& root, const std::string& base_dir,
                                              const ScenarioShape& shape, nlohmann::json& resolved);

}  // namespace dts::exp
