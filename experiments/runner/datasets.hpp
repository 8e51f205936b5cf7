// Reading the "data" section of an experiment into train and test sets.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config_reader.hpp"
#include "experiments/runner/experiment.hpp"

namespace dts::exp {
std::shared_ptr<const DataSets> read_datasets(ConfigReader& r, const std::string& base_dir, std::uint64_t seed);

// What `data.name` may say, for `dtsim list`: real sets (read or drawn) and modeled ones (shapes only).
struct DatasetInfo {
  std::string name, numerics, shape, source;
};
std::vector<DatasetInfo> dataset_catalog();
}  // namespace dts::exp
