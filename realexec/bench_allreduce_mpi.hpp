// Timing of dtsim's allreduce collectives (algorithms/collectives: ring, binomial tree) on the MPI backend,
// with the methodology of the Open MPI peer they are compared to (peers/mpi_allreduce.c), so that the two
// tables line up: per size, 2 warm-up calls and a calibration call pick `iters` so that one repetition lasts
// about budget_s / reps (1..1000 calls); then `reps` repetitions, each a barrier and `iters` back-to-back
// allreduces, timed as the maximum over ranks. The sum is checked once per size and algorithm.
// The collectives are in place (the peer is out of place): the buffer holds rank + 1 for the check, zeros
// while timed, so that repeated sums stay finite. Besides the allreduces, `grid`: BIDMach's line round
// (collectives/quorum_allreduce.hpp) over all ranks as one line, every quorum at 1, chunks of 20,000 floats;
// it averages, so its check is the mean. And `mpi`: MPI_Allreduce itself, called as the peer calls it (out of
// place, on MPI_COMM_WORLD) in the same processes, so that a ratio to it is free of what differs between two
// runs (on a VM, a process's speed can be set at its start: 2026-11-28).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/collectives/collectives.hpp"
#include "realexec/mpi_session.hpp"

namespace dts::mpi {

struct AllreduceBenchSpec {
  std::vector<std::uint64_t> sizes_bytes;  // each a positive multiple of 4 (floats)
  std::vector<std::string> algos;          // ring, tree, hypercube, grid, mpi
  int reps = 7;
  double budget_s = 2.1;  // per size and algorithm, over all repetitions
};

struct AllreduceTiming {
  std::string algo;
  std::uint64_t bytes = 0;
  int iters = 0;                   // calls per repetition
  std::vector<double> per_call_s;  // one per repetition: its mean time per call, maximum over ranks
  bool result_ok = false;          // every element of every rank's sum was exact
};

// Collective over MPI_COMM_WORLD: every rank calls it with the same spec and gets the same timings, in
// (size, algorithm) order. Throws InputError naming --algos for an unknown algorithm. Runs the collectives over an
// MpiComm of its own, as the algorithms do.
std::vector<AllreduceTiming> time_allreduce(const MpiSession& session, const AllreduceBenchSpec& spec);

}  // namespace dts::mpi
