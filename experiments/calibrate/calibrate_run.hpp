// `dtsim calibrate FILE`: fits the free parameters of a platform to calibration targets (calibration_spec.hpp).
// Each evaluation writes a candidate platform (the fitted keys as a merge patch over the platform file, by
// "base") and runs every target's experiment on it as `dtsim run` child processes; the objective is the
// weighted sum of squared relative errors (absolute where a target's value is 0), minimised by Nelder-Mead.
// The fitted platform file records the targets, the fitted values and the residuals in its "calibration" key;
// nothing else is written, and the runs are removed (--keep-runs DIR keeps them). Only the targets are run:
// the figures a calibration is validated on never enter it.
#pragma once

#include <string>
#include <vector>

namespace dts::exp {

struct CalibrateOptions {
  std::string file;
  std::string out;                        // the fitted platform file (default: the calibration file's "output")
  std::string keep_runs;                  // a new directory to keep every evaluation's runs in ("": removed)
  bool force = false;                     // replace --out if a dtsim calibration wrote it (never any other file)
  bool check = false;                     // read everything and check every target's run, fit nothing
  std::vector<std::string> simgrid_args;  // --cfg / --log for every run
};

// Returns the exit code: 0, 1 (a run failed) or 2 (bad input). Throws InputError for bad input found before
// anything runs.
int run_calibration(const CalibrateOptions& opt);

}  // namespace dts::exp
