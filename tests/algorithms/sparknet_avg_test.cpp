// SparkNet-style averaging (algorithms/mpca/sparknet_avg.cpp) on the quadratic problem, and the Spark overhead
// keys of MPCA and of it. Worker i's tau SGD steps from x~ give c_i + (1 - lr)^tau (x~ - c_i), so each round's
// mean is c + (1 - lr)^tau (x~ - c), c the mean of the c_i: the closed form the run must reproduce.
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/algorithms/algo_harness.hpp"

namespace {
dts::test::AlgoRun sparknet_run(int K, std::int64_t steps, int tau) {
  return dts::test::master_worker_run("sparknet_avg", K, steps, {{"comm_period_steps", tau}});
}
}  // namespace

TEST_CASE("sparknet_avg: rounds of broadcast, tau steps, tree mean give the closed form", "[algorithms][mpca]") {
  const auto [K, tau, steps] = GENERATE(table<int, int, int>({{1, 5, 20}, {3, 4, 22}, {5, 7, 30}}));
  INFO(K << " workers, tau " << tau << ", " << steps << " steps");
  const auto run = sparknet_run(K, steps, tau);
  const auto out = dts::test::run_quadratic_ok(run);
  CHECK(out["final_rank"] == 0);
  CHECK(out["final_step"] == steps);
  const int rounds = (steps + tau - 1) / tau;
  // Per round: the broadcast (one chunk per worker) and the tree reduce (one message per worker).
  CHECK(out["messages"] == rounds * 2 * K);
  const auto c = run.problem.mean_target();
  for (std::size_t k = 0; k < c.size(); ++k) {
    double x = 0;
    for (int done = 0; done < steps; done += tau) {
      const int local = std::min(tau, steps - done);
      x = c[k] + std::pow(1 - run.problem.lr, local) * (x - c[k]);
    }
    INFO("coordinate " << k);
    CHECK(out["final"][k].get<double>() == Approx(x).margin(1e-5));
  }
}

TEST_CASE("Spark overheads: job launches and the collective path's per-byte cost add their time",
          "[algorithms][mpca]") {
  const int K = 3, tau = 5, steps = 20, rounds = 4;
  auto run = sparknet_run(K, steps, tau);
  const double t0 = dts::test::run_quadratic_ok(run)["end_s"].get<double>();
  run.config["job_launch_s"] = 0.01;
  const double launched = dts::test::run_quadratic_ok(run)["end_s"].get<double>();
  CHECK(launched == Approx(t0 + rounds * 0.01).epsilon(1e-9));
  // 6 floats: 24 bytes; at 1e3 s/MiB a worker spends 24e3 / 2^20 s unpacking the broadcast and as much packing.
  run.config["collective_s_per_mib"] = 1e3;
  const double per = 24e3 / (1024.0 * 1024.0);
  CHECK(dts::test::run_quadratic_ok(run)["end_s"].get<double>() == Approx(launched + rounds * 2 * per).epsilon(1e-9));

  // mpca: fewer cycles in the same steps once launches and preparations take time; the run still converges.
  auto m = dts::test::master_worker_run("mpca", K, 600);
  const auto free = dts::test::run_quadratic_ok(m);
  m.config = {{"job_launch_s", 0.002}, {"prepare_s", 0.002}, {"collective_s_per_mib", 1e3}};
  const auto slow = dts::test::run_quadratic_ok(m);
  CHECK(slow["counters"]["mpca_cycles"].get<int>() < free["counters"]["mpca_cycles"].get<int>() / 2);
  CHECK(dts::test::distance_to_answer(slow, m.problem) < 1e-3);
}

TEST_CASE("sparknet_avg: tau 1 or more", "[algorithms][mpca]") {
  const auto out = dts::test::run_quadratic(sparknet_run(2, 10, 0));
  REQUIRE(out.contains("error"));
  CHECK(out["error"].get<std::string>().find("comm_period_steps") != std::string::npos);
}
