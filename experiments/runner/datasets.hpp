// Reading the "data" section of an experiment into train and test sets.
#pragma once

#include <memory>

#include "core/config_reader.hpp"
#include "experiments/runner/experiment.hpp"

namespace dts::exp {
std::shared_ptr<const DataSets> read_datasets(ConfigReader& r, const std::string& base_dir, std::uint64_t seed);
}  // namespace dts::exp
