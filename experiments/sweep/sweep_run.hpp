// `dtsim sweep`: every point of a sweep runs as `dtsim run EXPERIMENT --out DIR/<point> --set ...`, in parallel
// over local cores (--jobs) and, under mpirun or with --shard K/N, split over processes by point. A point whose
// result directory exists is done and never rerun, so a sweep that was stopped resumes where it stopped; a
// killed point leaves only DIR/<point>.partial-PID, which its next run removes. The table (sweep_table.hpp) is
// written once every point is done, by the one process (rank 0) or by --collate.
#pragma once

#include <string>
#include <vector>

namespace dts::exp {

struct SweepOptions {
  std::string file;
  std::string out;                        // default results/<sweep name>
  int jobs = 1;                           // points run at once by this process
  bool force = false;                     // start over a directory that holds a different sweep
  std::string shard;                      // "K/N": this process runs points K, K+N, ...; "" from mpirun or none
  bool collate = false;                   // only write the table (every point must be done)
  bool check = false;                     // validate every point, run nothing
  std::vector<std::string> simgrid_args;  // --cfg / --log for every point
};

int run_sweep(const SweepOptions& opt);

}  // namespace dts::exp
