// A calibration file (`dtsim calibrate`, issue 19): a platform file, its free parameters (JSON pointers to plain
// numbers of that file, each with bounds), and the calibration targets, each a figure of a simulated run (a
// value of its summary.json, or the ratio of two) with the measured or published value it must match. Read
// strictly here; fitted by calibrate_run.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dts::exp {

struct FreeParameter {
  std::string key;  // a JSON pointer into the platform file: "/link_latency_s", "/node/copy/call_latency_s"
  double min = 0, max = 0, start = 0;
  bool log = false;  // searched on the logarithm's scale (min > 0)
};

struct CalibrationTarget {
  std::string name;
  std::string experiment;         // usable from the current directory
  std::string variant;            // one of the experiment's variants; "" when it has none
  nlohmann::json variant_patch;   // that variant's object, run alone
  std::vector<std::string> sets;  // --set arguments for the run
  std::string figure;             // JSON pointer into the run's summary.json
  std::string divide_by;          // "": the figure itself; else the figure over this one (a share of time)
  double value = 0;               // what the figure must be
  double weight = 1;
  std::string source;  // where `value` comes from
};

struct Calibration {
  std::string file, name;
  std::string platform;       // the platform file to fit, usable from the current directory
  nlohmann::json platform_j;  // its contents
  std::string output;         // the fitted platform file ("": --out gives it)
  std::vector<FreeParameter> parameters;
  // Platform values set as they are, not fitted (a model choice such as "/node/copy/pageable": true): JSON
  // pointer -> value, applied with the fitted ones.
  std::vector<std::pair<std::string, nlohmann::json>> fixed;
  std::vector<CalibrationTarget> targets;
  int max_evaluations = 150;
  double tolerance = 1e-4;  // on each parameter's [0, 1] scale
};

// Every error is an InputError naming the file and key.
Calibration read_calibration(const std::string& file);

// The run a target needs (experiment, variant and sets): targets that share one are computed from one run.
std::string run_key(const CalibrationTarget& t);

}  // namespace dts::exp
