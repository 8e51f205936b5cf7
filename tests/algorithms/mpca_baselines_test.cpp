// The MPCA paper's asynchronous baselines (papers/mpca_sgd.md §5.2, §5.4) on the quadratic problem.
// easgd_driver (Zhang et al.'s EASGD, server on the driver): per tau-period a worker sends one request, gets x~
// (M bytes) and sends d (M bytes), so the server's NIC carries K x 2M per period (§5.2, §5.6); the center lands
// on the optimum when the workers agree and near the mean of the optima when they disagree; a failed worker is
// dropped. ps_sharded is ps_async under the paper's name: the same run, message for message.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun driver_run(int K, int tau) {
  return dts::test::master_worker_run("easgd_driver", K, 600, {{"comm_period_steps", tau}});
}
}  // namespace

TEST_CASE("easgd_driver: per tau-period one request, x~ down and d up per worker", "[algorithms][mpca]") {
  const auto [K, tau] = GENERATE(table<int, int>({{1, 1}, {4, 1}, {4, 3}, {7, 20}}));
  AlgoRun run = driver_run(K, tau);
  run.problem.same_target = true;
  const auto out = dts::test::run_quadratic_ok(run);
  REQUIRE(out["final_rank"] == 0);  // the server's x~ is the run's model
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  const int periods = static_cast<int>((run.steps + tau - 1) / tau);
  REQUIRE(out["messages"] == 3 * K * periods);  // no "done": the server counts the d's it is owed
  const double m = 4.0 * static_cast<double>(run.problem.dim);
  REQUIRE(out["bytes_sent"][0].get<double>() == K * periods * m);  // x~ to every worker each period
  for (int r = 1; r <= K; ++r) REQUIRE(out["bytes_sent"][r].get<double>() == periods * m);  // its d's
}

TEST_CASE("easgd_driver: one worker follows the closed form of §5.2", "[algorithms][mpca]") {
  // K = 1: the exchanges are sequential (the worker's next request leaves after its d has arrived), so every
  // tau steps d = alpha (x - x~), x -= d, x~ += d, and between them SGD steps on (x - c)^2 / 2.
  const int tau = GENERATE(1, 3);
  AlgoRun run = driver_run(1, tau);
  run.steps = 60;
  run.config["elastic_alpha"] = 0.4;
  const auto out = dts::test::run_quadratic_ok(run);
  const auto c = run.problem.target(0);
  for (std::size_t k = 0; k < run.problem.dim; ++k) {
    double x = 0, center = 0;
    for (std::int64_t t = 0; t < run.steps; ++t) {
      if (t % tau == 0) {
        const double d = 0.4 * (x - center);
        x -= d;
        center += d;
      }
      x -= run.problem.lr * (x - c[k]);
    }
    CAPTURE(k);
    REQUIRE(out["final"][k].get<double>() == Approx(center).margin(1e-5));
  }
}

TEST_CASE("easgd_driver: with disagreeing workers x~ settles at the mean of the optima", "[algorithms][mpca]") {
  const auto [K, tau] = GENERATE(table<int, int>({{4, 1}, {4, 3}, {7, 2}}));
  AlgoRun run = driver_run(K, tau);
  const double alpha = 0.005;
  run.config["elastic_alpha"] = alpha;
  run.steps = 3000;
  const auto out = dts::test::run_quadratic_ok(run);
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * alpha);
}

TEST_CASE("easgd_driver: the server carries on without a worker that fails", "[algorithms][mpca]") {
  const auto out = dts::test::run_with_failed_worker(driver_run(4, 1), GENERATE(true, false));
  REQUIRE(out["final_step"] == 600);
}

TEST_CASE("ps_sharded is ps_async: the same model, messages and times", "[algorithms][mpca]") {
  const auto params = GENERATE(table<int, int>({{3, 4}, {4, 1000000}}));
  const int P = std::get<0>(params), bound = std::get<1>(params);  // clang 14 captures no structured bindings
  const auto run_as = [&](const char* name) {
    AlgoRun run;
    run.algorithm = name;
    run.config["bigarray_bound"] = bound;
    run.problem.workers = P;
    run.problem.dim = 12;
    run.problem.blocks = 3;
    run.steps = 40;
    run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
    return dts::test::run_quadratic_ok(run);
  };
  const auto sharded = run_as("ps_sharded"), async = run_as("ps_async");
  REQUIRE(sharded["final"] == async["final"]);
  REQUIRE(sharded["messages"] == async["messages"]);
  REQUIRE(sharded["end_s"] == async["end_s"]);
  REQUIRE(sharded["bytes_sent"] == async["bytes_sent"]);
}
