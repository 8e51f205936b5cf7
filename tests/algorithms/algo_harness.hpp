// Runs a registered algorithm on the quadratic test problem (tests/support/quadratic_compute.hpp) on the
// simulator, in an isolated process, and returns the final reported model and the run's counters.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/collective_sim.hpp"
#include "sim/launcher.hpp"
#include "sim/platform.hpp"
#include "tests/support/quadratic_compute.hpp"

namespace dts::test {

struct AlgoRun {
  std::string algorithm;
  nlohmann::json config = nlohmann::json::object();  // the algorithm's own keys
  QuadraticProblem problem;
  std::int64_t steps = 100;
  sim::PlatformSpec platform;
  sim::Fidelity fidelity = sim::Fidelity::kMessage;
  std::vector<RankEvent> failures;       // ranks that fail partway (the scenario's failures)
  std::vector<RankEvent> joins, leaves;  // the scenario's, for algorithms with a changing membership
  std::vector<Restart> restarts;         // the failures with restart_after_s
};

// A run of `algorithm` with P workers and a master rank (P + 1 ranks) on the 6-dimensional quadratic problem,
// over a pinned star of 10 Gb/s, 5 us links.
AlgoRun master_worker_run(const std::string& algorithm, int P, std::int64_t steps,
                          nlohmann::json config = nlohmann::json::object());

// {"final": [...], "final_step": n, "evals": k, "steps": [per rank], "last_step_s": [per rank, time of the
//  last recorded step; null for ranks without steps], "end_s": t, "messages": m, "bytes_sent": [per rank],
//  "observed": {rank: the last model it gave Recorder::observe}};
// with problem.shard_rows > 0 also "rows_used": [per worker: the rows it trained on, in order];
// {"error": what} if the run threw.
nlohmann::json run_quadratic(const AlgoRun& run);

// run_quadratic, then a test failure (with the outcome) if the run threw.
nlohmann::json run_quadratic_ok(const AlgoRun& run);

// max_k |x_k - mean_k| of the final model against the closed-form answer.
double distance_to_answer(const nlohmann::json& result, const QuadraticProblem& p);

// A server algorithm's `run` (4 agreeing workers, ranks 1-4, behind rank 0), packed or one message per block of
// three, with worker rank 2 failing a third of the way through. Requires that the run ends without error with
// the server's model, the other workers having run every step and rank 2 only part of them, on the optimum.
// Returns the outcome for the algorithm's own checks.
nlohmann::json run_with_failed_worker(AlgoRun run, bool packed);

}  // namespace dts::test
