// The parts of `dtsim run --backend mpi` that need no MPI: what one rank reports to rank 0 after a plan
// (its metrics rows, final evaluation, clock and byte counters) as JSON for the trip, and the merge of
// every rank's report into the one MetricsLog and RunOutcome that results.hpp writes (run_mpi_report.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "experiments/runner/metrics.hpp"
#include "experiments/runner/results.hpp"

namespace dts::exp {

struct RankReport {
  MetricsLog log;
  double end_s = 0;  // wall seconds when the algorithm returned on this rank
  std::uint64_t messages = 0, bytes_sent = 0, bytes_received = 0;
  RankActivity activity;  // its steps, its blocked time in waits (idle_s) and by peer
};

// Exact: doubles and floats survive the round trip bit for bit; a non-finite loss becomes "no loss".
nlohmann::json report_to_json(const RankReport& r);
RankReport report_from_json(const nlohmann::json& j);
// Reports in rank order. Rows are ordered by (time, rank, step); the final evaluation is the one rank that
// made it; the run's time is the last rank's end; MetricsLog::per_rank holds the reports' activities.
std::pair<MetricsLog, RunOutcome> merge_reports(const std::vector<RankReport>& reports);

}  // namespace dts::exp
