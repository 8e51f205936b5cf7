// Asynchronous EASGD on the quadratic problem. At the fixed point of eq. (1)-(2) the center is the mean
// of the workers, and summing the workers' stationarity conditions makes that mean the mean of the c_i.
// Asynchrony makes the center move toward one worker at a time, so with disagreeing workers it oscillates
// around that point by about alpha * |x_i - center| per update; with agreeing workers it lands exactly.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun easgd_run(int P, int tau) {
  return dts::test::master_worker_run("easgd_async", P, 600, {{"comm_period_steps", tau}});
}
}  // namespace

TEST_CASE("easgd_async: workers that agree pull the center onto their optimum", "[algorithms]") {
  const auto [P, tau] = GENERATE(table<int, int>({{1, 1}, {4, 1}, {4, 3}, {7, 2}}));
  AlgoRun run = easgd_run(P, tau);
  run.problem.same_target = true;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);  // the center is what the run reports
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  // Per exchange: weights up, center down; plus one "done" per worker.
  const std::int64_t exchanges = (run.steps + tau - 1) / tau;
  REQUIRE(out["messages"] == P * (2 * exchanges + 1));
}

TEST_CASE("easgd_async: with disagreeing workers the center settles at the mean of the optima", "[algorithms]") {
  const auto [P, tau] = GENERATE(table<int, int>({{4, 1}, {4, 3}, {7, 2}}));
  AlgoRun run = easgd_run(P, tau);
  const double alpha = 0.005;
  run.config["elastic_alpha"] = alpha;
  run.steps = 3000;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  // Targets lie in [-1, 1]^d, so one update moves the center by at most 2 alpha per coordinate.
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * alpha);
}

TEST_CASE("easgd_async: the center carries on without a worker that fails", "[algorithms]") {
  /* In details:
   *   o 4 agreeing workers, tau 1; worker rank 2 fails a third of the way through the run (its main actor
   *     is killed and the simulator marks it failed), packed or one message per layer block.
   * Expectations
   *   o the run ends without error: the center drops rank 2 and serves the others to the end;
   *   o rank 2 stopped partway, the others ran every step, and the center still lands on the optimum.
   */
  const AlgoRun run = easgd_run(4, 1);
  const auto out = dts::test::run_with_failed_worker(run, GENERATE(true, false));
  REQUIRE(out["final_step"] == run.steps);
}
