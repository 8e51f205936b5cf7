// The collated table of a sweep: one row per point and variant, the varied keys' values, then the figures of
// its summary.json (every top-level number or string, and the run's communication_ratio). Written as
// table.csv and table.json in the sweep's directory, each atomically (a temporary file renamed into place).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/sweep/sweep_spec.hpp"

namespace dts::exp {

// The ids of the points whose result directory is missing.
std::vector<std::string> missing_points(const Sweep& sweep, const std::filesystem::path& dir);
// Reads every point's results and writes table.csv and table.json; returns the number of rows.
std::size_t write_sweep_table(const Sweep& sweep, const std::filesystem::path& dir);

}  // namespace dts::exp
