// Hogwild EASGD on the quadratic problem: the lock-free center reaches the mean of the c_i like easgd_async
// (exactly with agreeing workers, within the asynchronous oscillation otherwise), with easgd_async's
// messages; and its servers update concurrently: when the center's update is the bottleneck, easgd_async's
// one-at-a-time center is P times slower while the Hogwild center keeps up with the workers.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun hogwild_run(int P, int tau) {
  return dts::test::master_worker_run("easgd_hogwild", P, 600, {{"comm_period_steps", tau}});
}
}  // namespace

TEST_CASE("easgd_hogwild: agreeing workers pull the center onto their optimum", "[algorithms]") {
  const auto [P, tau, packed] =
      GENERATE(table<int, int, bool>({{1, 1, true}, {4, 1, true}, {7, 2, true}, {4, 3, false}}));
  AlgoRun run = hogwild_run(P, tau);
  run.problem.same_target = true;
  run.problem.blocks = 2;
  run.config["packed"] = packed;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  // Per exchange: weights up, center down (each in 2 layers when not packed); plus one "done" per worker.
  const std::int64_t exchanges = (run.steps + tau - 1) / tau, per_vector = packed ? 1 : 2;
  REQUIRE(out["messages"] == P * (2 * per_vector * exchanges + 1));
}

TEST_CASE("easgd_hogwild: with disagreeing workers the center settles at the mean of the optima", "[algorithms]") {
  AlgoRun run = hogwild_run(4, 2);
  const double alpha = 0.005;
  run.config["elastic_alpha"] = alpha;
  run.steps = 3000;
  run.problem.update_time_s = 1e-4;  // the servers' updates overlap: deltas against stale snapshots
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * alpha);
}

TEST_CASE("easgd_hogwild: the servers update the center concurrently, easgd_async's center one at a time",
          "[algorithms]") {
  /* In details:
   *   o 8 workers, tiny messages; F/B 0.5 ms; every update pass (the center's elastic update; the worker's
   *     optimizer step and its two elastic passes) takes U = 2 ms; 20 steps
   * Expectations
   *   o easgd_async: the center does 8 updates of 2 ms per round, one after the other, so it is the
   *     bottleneck: end ~ 20 * 8 * U = 320 ms
   *   o easgd_hogwild: the 8 servers update side by side and keep up with the workers, whose own cycle is
   *     F + 3 U: end ~ 20 * (F + 3 U) = 130 ms
   */
  AlgoRun run = hogwild_run(8, 1);
  run.steps = 20;
  run.problem.step_time_s = 0.5e-3;
  run.problem.update_time_s = 2e-3;
  const auto hogwild = dts::test::run_quadratic(run);
  run.algorithm = "easgd_async";
  const auto locked = dts::test::run_quadratic(run);
  REQUIRE(!hogwild.contains("error"));
  REQUIRE(!locked.contains("error"));
  REQUIRE(locked["end_s"].get<double>() == Approx(20 * 8 * 2e-3).epsilon(0.02));
  REQUIRE(hogwild["end_s"].get<double>() == Approx(20 * (0.5e-3 + 3 * 2e-3)).epsilon(0.01));
}

TEST_CASE("easgd_hogwild: the other servers carry on when a worker fails", "[algorithms]") {
  /* In details:
   *   o 4 agreeing workers; worker rank 2 fails a third of the way through the run, packed or one message per
   *     block (a failure between the pieces of a message drops it).
   * Expectations
   *   o the run ends without error: rank 2's server ends, the others serve their workers to the end;
   *   o rank 2 stopped partway, the others ran every step, and the center still lands on the optimum.
   */
  dts::test::run_with_failed_worker(hogwild_run(4, 1), GENERATE(true, false));
}
