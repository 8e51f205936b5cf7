// `dtsim run`: the options, and the two backends' entry points. The simulator's (experiments/runner_sim) validates
// an experiment, runs each of its configurations in a child process (SimGrid allows one engine per process), and
// publishes the result directory atomically: it appears complete, or not at all. MPI's (experiments/runner_mpi)
// runs them in one MPI job. A build without a backend makes its entry point an input error (without_sim.cpp,
// without_mpi.cpp).
#pragma once

#include <string>
#include <vector>

#include "experiments/runner/simulator_input.hpp"

namespace dts::exp {

struct RunOptions {
  std::string experiment_file;
  std::string out_dir;                    // default: results/<experiment name>
  std::vector<std::string> sets;          // --set key.path=value
  std::vector<std::string> simgrid_args;  // --cfg=... / --log=...
  std::string backend = "sim";            // --backend: sim | mpi
  double hang_timeout_s = 300;            // --hang-timeout (mpi): longest wait with no progress
  bool check_only = false;                // --check: read and validate every plan, run nothing
  bool force = false;                     // --force: an existing dtsim result directory may be replaced
  // How --backend mpi reads the simulator's part of the experiment: the simulator's reader when dtsim has the
  // simulator (a bad platform is bad input on either backend), else kept unread.
  const SimulatorReader* simulator = &unread_simulator();
};

// Returns the process exit code: 0, 1 (a run failed) or 2 (bad input). Throws ConfigError for bad input
// found before anything runs. Without DTS_WITH_SIM it is an input error.
int run_experiment(const RunOptions& opt);

// `dtsim run --backend mpi`, on every rank of an MPI job (run_mpi.cpp): the plans run one after another in
// this job, rank 0 writes the result directory. Returns the exit code, the same on every rank; a rank that
// fails mid-run ends the whole job (MPI_Abort). With --check it runs no job (no mpirun needed): it checks what a
// job would refuse on input and prints the `mpirun -np` each plan needs. Without DTS_WITH_MPI it is an input error.
int run_experiment_mpi(const RunOptions& opt);

}  // namespace dts::exp
