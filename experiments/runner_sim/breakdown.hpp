// The time breakdown of a simulated run (papers/easgd_hpc.md §11): summary.json "time_breakdown", from the
// simulator's per-actor accounts (sim/time_account.hpp), in four views:
//   run      the critical path to the end of the run: overlapped time goes to the visible part, so the
//            categories add up to simulated_time_s (the paper's breakdown);
//   master   the master rank's own time (what it was blocked in; waiting for peers is idle);
//   workers  the mean over the workers of their own time;
//   ranks    every rank's own time.
// Each view: seconds per category, total_s, communication_s (the parameter and data transfers) and
// communication_ratio = communication_s / total_s. And the table dtsim run prints at the end.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/runner/experiment.hpp"
#include "sim/time_account.hpp"

namespace dts::exp {

// The rank holding the center or the parameters: rank 0 with a server rank, worker rank 1 where the
// algorithm puts it there (easgd_sync variants 2-3, sync_sgd master "worker"); -1 without a master.
Rank master_rank(const Plan& plan);

nlohmann::json time_breakdown(const std::vector<sim::ActorTimes>& actors, int ranks, int workers, Rank master,
                              double end_s);

// One row per result ({label, summary.json}), the run view: seconds per category, total, communication ratio.
std::string breakdown_table(const std::vector<std::pair<std::string, nlohmann::json>>& results);

}  // namespace dts::exp
