// Asynchronous SGD with a parameter server on the quadratic problem: with agreeing workers W lands on
// their optimum; with disagreeing ones every update pulls W toward one c_i, so W circles the mean of the
// c_i within a few learning rates; 2 messages per step and worker plus one "done". Async MSGD (async_msgd)
// keeps the momentum on the master: with one worker it is heavy-ball gradient descent, written out by hand.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun async_run(int P) { return dts::test::master_worker_run("async_sgd", P, 300); }
}  // namespace

TEST_CASE("async_sgd: agreeing workers bring W onto their optimum, 2 messages per step", "[algorithms]") {
  const auto [P, packed] = GENERATE(table<int, bool>({{1, true}, {4, true}, {4, false}, {6, true}}));
  AlgoRun run = async_run(P);
  run.problem.same_target = true;
  run.problem.blocks = 3;
  run.config["packed"] = packed;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  const std::int64_t per_vector = packed ? 1 : 3;
  REQUIRE(out["messages"] == P * (2 * per_vector * run.steps + 1));
}

TEST_CASE("async_sgd: with disagreeing workers W circles the mean of the optima", "[algorithms]") {
  AlgoRun run = async_run(4);
  run.problem.lr = 0.002;
  run.steps = 2000;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  // One update moves W by at most 2 lr per coordinate; a round of P updates by 2 P lr.
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * 4 * 0.002);
}

TEST_CASE("async_msgd: the master applies eq. (3)-(4) to each gradient", "[algorithms]") {
  AlgoRun run = async_run(1);
  run.algorithm = "async_msgd";
  run.config = {{"optimizer", {{"kind", "momentum"}}}};
  run.problem.momentum = 0.9;
  run.problem.lr = 0.05;
  run.steps = 40;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  const auto c = run.problem.target(0);
  const auto final = out["final"].get<std::vector<double>>();
  for (std::size_t k = 0; k < c.size(); ++k) {
    double w = 0, v = 0;
    for (int t = 0; t < run.steps; ++t) {
      v = 0.9 * v - 0.05 * (w - c[k]);  // (3), with the gradient at the W the worker pulled
      w += v;                           // (4)
    }
    REQUIRE(final[k] == Approx(w).margin(1e-6));
  }
}

TEST_CASE("async_sgd: the master carries on without a worker that fails", "[algorithms]") {
  /* In details:
   *   o 4 agreeing workers; worker rank 2 fails a third of the way through the run, packed or one message per
   *     block (a failure between the pieces of a gradient drops that gradient).
   * Expectations
   *   o the run ends without error: the master drops rank 2 and serves the others to the end;
   *   o rank 2 stopped partway, the others ran every step, and W still lands on the optimum.
   */
  dts::test::run_with_failed_worker(async_run(4), GENERATE(true, false));
}
