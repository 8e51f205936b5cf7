// `dtsim run`: validates an experiment, runs each of its configurations in a child process (SimGrid
// allows one engine per process), and publishes the result directory atomically: it appears complete, or
// not at all.
#pragma once

#include <string>
#include <vector>

#include "experiments/runner/experiment.hpp"
#include "sim/launcher.hpp"

namespace dts::exp {

// The simulation of a plan: its platform, ranks, steps, fidelity and algorithm, and each rank's SimCompute
// on its host's device. The caller adds a recorder (and SimGrid arguments); `plan` must outlive the job.
sim::SimJob sim_job(const Plan& plan);

struct RunOptions {
  std::string experiment_file;
  std::string out_dir;                    // default: results/<experiment name>
  std::vector<std::string> sets;          // --set key.path=value
  std::vector<std::string> simgrid_args;  // --cfg=... / --log=...
  std::string backend = "sim";            // --backend: sim | mpi
  double hang_timeout_s = 300;            // --hang-timeout (mpi): longest wait with no progress
  bool check_only = false;                // --check: read and validate every plan, run nothing
  bool force = false;                     // --force: an existing dtsim result directory may be replaced
};

// Returns the process exit code: 0, 1 (a run failed) or 2 (bad input). Throws ConfigError for bad input
// found before anything runs.
int run_experiment(const RunOptions& opt);

// `dtsim run --backend mpi`, on every rank of an MPI job (run_mpi.cpp): the plans run one after another in
// this job, rank 0 writes the result directory. Returns the exit code, the same on every rank; a rank that
// fails mid-run ends the whole job (MPI_Abort). With --check it runs no job (no mpirun needed): it checks what a
// job would refuse on input and prints the `mpirun -np` each plan needs. Without DTS_WITH_MPI it is an input error.
int run_experiment_mpi(const RunOptions& opt);

// Runs one plan in this process and writes config.resolved.json, metrics.csv and summary.json into `dir`.
void run_plan(const Plan& plan, const std::string& dir, const std::vector<std::string>& simgrid_args);

}  // namespace dts::exp
