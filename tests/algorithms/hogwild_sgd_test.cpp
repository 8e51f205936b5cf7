// Hogwild SGD on the quadratic problem: it converges like async_sgd, with its messages, and its servers
// apply gradients concurrently: when the master's update is the bottleneck, async_sgd's one-at-a-time
// master is P times slower while the Hogwild master keeps up with the workers.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun hogwild_run(int P) { return dts::test::master_worker_run("hogwild_sgd", P, 300); }
}  // namespace

TEST_CASE("hogwild_sgd: agreeing workers bring W onto their optimum, 2 messages per step", "[algorithms]") {
  const auto [P, packed] = GENERATE(table<int, bool>({{1, true}, {4, true}, {5, false}}));
  AlgoRun run = hogwild_run(P);
  run.problem.same_target = true;
  run.problem.blocks = 2;
  run.problem.update_time_s = 1e-4;  // updates of different workers overlap
  run.config["packed"] = packed;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  const std::int64_t per_vector = packed ? 1 : 2;
  REQUIRE(out["messages"] == P * (2 * per_vector * run.steps + 1));
}

TEST_CASE("hogwild_sgd: with disagreeing workers W circles the mean of the optima", "[algorithms]") {
  AlgoRun run = hogwild_run(4);
  run.problem.lr = 0.002;
  run.problem.update_time_s = 1e-4;
  run.steps = 2000;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * 4 * 0.002);
}

TEST_CASE("hogwild_sgd: the servers apply gradients concurrently, async_sgd's master one at a time", "[algorithms]") {
  /* In details:
   *   o 8 workers, tiny messages (m ~ 10 us); F/B 0.5 ms; the master's optimizer step takes U = 1 ms; 20 steps
   * Expectations
   *   o async_sgd: 8 updates of 1 ms per round, one after the other: end ~ 20 * 8 * U = 160 ms
   *   o hogwild_sgd: every worker's cycle is F + m + U + m, the servers side by side: end ~ 20 * 1.52 ms
   */
  AlgoRun run = hogwild_run(8);
  run.steps = 20;
  run.problem.step_time_s = 0.5e-3;
  run.problem.update_time_s = 1e-3;
  const auto hogwild = dts::test::run_quadratic(run);
  run.algorithm = "async_sgd";
  const auto locked = dts::test::run_quadratic(run);
  REQUIRE(!hogwild.contains("error"));
  REQUIRE(!locked.contains("error"));
  REQUIRE(locked["end_s"].get<double>() == Approx(20 * 8 * 1e-3).epsilon(0.02));
  REQUIRE(hogwild["end_s"].get<double>() == Approx(20 * (0.5e-3 + 1e-3 + 2 * 10e-6)).epsilon(0.01));
}

TEST_CASE("hogwild_sgd: the other servers carry on when a worker fails", "[algorithms]") {
  /* In details:
   *   o 4 agreeing workers; worker rank 2 fails a third of the way through the run, packed or one message per
   *     block (a failure between the pieces of a message drops it).
   * Expectations
   *   o the run ends without error: rank 2's server ends, the others serve their workers to the end;
   *   o rank 2 stopped partway, the others ran every step, and W still lands on the optimum.
   */
  dts::test::run_with_failed_worker(hogwild_run(4), GENERATE(true, false));
}
