// Shared parts of `dtsim bench scale` (bench_scale.cpp: the training cases; bench_scale_smpi.cpp: the SMPI
// side by side).
#pragma once

#include <functional>
#include <string>

#include "sim/collective_sim.hpp"
#include "sim/platform.hpp"

namespace dts::bench::scale {

// A bench platform: "star" (platforms/ec2_10g.json) or "fat_tree" (platforms/fat_tree_ib.json with as
// many leaf switches of 32 nodes as `ranks` need).
nlohmann::json platform_json(const std::string& name, int ranks);
sim::PlatformSpec platform_spec(const std::string& name, int ranks);

// What a child process sends back: its figures, and the wait4 peak memory added by the parent.
struct ChildResult {
  bool ok = false;
  double setup_s = 0;     // wall seconds from the start to the end of the first measured point
  double wall_per_s = 0;  // wall seconds per iteration (or per call)
  double sim_per_s = 0;   // simulated seconds per iteration (or per call)
  double total_s = 0;     // wall seconds of the whole child
  double peak_mb = 0;     // ru_maxrss of the child
};
// Runs fn in a forked child (SimGrid allows one engine per process; fresh memory to measure) and kills it
// after limit_s of wall time.
ChildResult in_child(const std::function<ChildResult()>& fn, double limit_s);

// Predicted wall seconds of a case at `workers` from the earlier sizes of the same series (by their
// growth, at least linear; quadratic when only one point is known). Negative when nothing is known.
double predict_s(const std::vector<std::pair<int, double>>& known, int workers);

// Predicted peak MB at `workers` from the last size's peak (linear), and whether it fits in 40 % of the
// memory available now (the machine is shared).
double predict_mb(const std::vector<std::pair<int, double>>& peaks, int workers);
bool memory_allows(double predicted_mb);

// The exponent k of v ~ workers^k between two rows of a series: 1 grows like the workers, 2 like their square.
double growth_exponent(int p0, double v0, int p1, double v1);

struct SmpiOptions {
  std::vector<int> workers;
  std::vector<std::string> algos;      // ring, tree: the allreduce compared
  std::vector<std::string> platforms;  // star, fat_tree
  std::vector<std::string> fidelities;
  double bytes = 0;
  int reps = 1;
  double budget_s = 60;
};
// Our allreduce of `bytes` alone (modeled, nothing charged but the network) against SMPI's MPI_Allreduce
// (smpi/allreduce lr for ring, redbcast for tree) on the same platform exported as SimGrid XML, same
// network model; prints the table. Returns false (and says why) when smpicc/smpirun are missing.
bool smpi_side_by_side(const SmpiOptions& o);

}  // namespace dts::bench::scale
