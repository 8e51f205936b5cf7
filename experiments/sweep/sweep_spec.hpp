// A sweep file: one experiment run at many points, each point a set of --set overrides (a grid over keys, and a
// list of explicit points). Read and expanded here; run by sweep_run.cpp, collated by sweep_table.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dts::exp {

struct SweepPoint {
  std::string id;                                            // "p007": its result directory under the sweep's
  std::vector<std::pair<std::string, nlohmann::json>> keys;  // key.path -> value, in the varied keys' order
  // The point's --set arguments: the sweep's fixed ones, then its own.
  std::vector<std::string> sets;
};

struct SweepPlot {
  std::string x, y, series;  // a varied key, a figure of the table, and optionally a varied key per line
};

struct Sweep {
  std::string file, name;
  std::string experiment;           // the experiment file, as a path usable from the current directory
  std::vector<std::string> varied;  // the keys the points vary, grid keys first (alphabetical), then others
  std::vector<SweepPoint> points;   // grid points (the last key varies fastest), then the listed points
  std::vector<SweepPlot> plots;     // optional
  nlohmann::json expansion;         // what identifies the sweep: experiment and every point's --set
};

// Reads and expands a sweep file; every error is an InputError naming the file and key. At most 100000 points.
Sweep read_sweep(const std::string& file);

}  // namespace dts::exp
