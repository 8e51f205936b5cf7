// Synchronous SGD with a master on the quadratic problem: the master's step with the SUM of the gradients
// is gradient descent on sum_i f_i with rate eta, so W lands on the mean of the c_i while P eta < 2 and
// diverges beyond, where average_gradients (allreduce_sgd's convention) still converges. Also: tree message
// counts, per-layer messages, and results that timing cannot change.
#include <catch2/catch.hpp>
#include <cmath>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun sync_run(int P, const char* master) {
  // 200 steps: with P = 1 the error contracts by 0.9 per step.
  return dts::test::master_worker_run("sync_sgd", P, 200, {{"master", master}});
}
}  // namespace

TEST_CASE("sync_sgd converges to the mean of the targets with tree message counts", "[algorithms]") {
  const auto [P, master] = GENERATE(
      table<int, const char*>({{1, "host"}, {1, "worker"}, {3, "host"}, {4, "worker"}, {6, "host"}, {6, "worker"}}));
  AlgoRun run = sync_run(P, master);
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == (std::string(master) == "host" ? 0 : 1));
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  // A binomial reduce and a binomial broadcast over n members: n - 1 messages each per step.
  const int n = std::string(master) == "host" ? P + 1 : P;
  REQUIRE(out["messages"] == 2 * (n - 1) * run.steps);
}

TEST_CASE("sync_sgd: the master steps with the sum of the gradients", "[algorithms]") {
  // 24 workers with eta = 0.1: the summed step contracts by 1 - 2.4 per step and diverges; the averaged
  // one contracts by 0.9.
  AlgoRun run = sync_run(24, "worker");
  run.steps = 60;
  const auto summed = dts::test::run_quadratic(run);
  run.config["average_gradients"] = true;
  const auto averaged = dts::test::run_quadratic(run);
  REQUIRE(!summed.contains("error"));
  REQUIRE(!averaged.contains("error"));
  REQUIRE(!(dts::test::distance_to_answer(summed, run.problem) < 1.0));  // diverged (or NaN)
  REQUIRE(dts::test::distance_to_answer(averaged, run.problem) < 1e-2);
}

TEST_CASE("sync_sgd: per-layer messages, stragglers and slower networks leave the model unchanged", "[algorithms]") {
  /* In details:
   *   o 2 workers, master on worker rank 1 (trees of one edge), 4,000 parameters in 4 layers; 100 MB/s
   *     links with 50 us latency; F = 1 ms
   * Expectations
   *   o packed: each step F + 2 (2 * 50 us + 16 kB / 100 MB/s); per layer the four pieces go one after
   *     the other: F + 2 (4 * 100 us + 160 us); 4 times the messages
   *   o the same W either way, and with a straggler on a 10 times slower network
   */
  AlgoRun run = sync_run(2, "worker");
  run.problem.dim = 4000;
  run.problem.blocks = 4;
  run.steps = 10;
  run.platform = dts::test::pinned_star(3, 8e8, 50e-6);
  const auto packed = dts::test::run_quadratic(run);
  run.config["packed"] = false;
  const auto layered = dts::test::run_quadratic(run);
  run.problem.slowdown = {1.0, 3.0};
  run.platform = dts::test::pinned_star(3, 8e7, 50e-6);
  const auto perturbed = dts::test::run_quadratic(run);
  REQUIRE(!packed.contains("error"));
  REQUIRE(!layered.contains("error"));
  REQUIRE(!perturbed.contains("error"));
  REQUIRE(layered["messages"] == 4 * packed["messages"].get<std::int64_t>());
  REQUIRE(packed["end_s"].get<double>() == Approx(10 * (1e-3 + 2 * (100e-6 + 160e-6))).epsilon(1e-9));
  REQUIRE(layered["end_s"].get<double>() == Approx(10 * (1e-3 + 2 * (4 * 100e-6 + 160e-6))).epsilon(1e-9));
  REQUIRE(packed["final"] == layered["final"]);
  REQUIRE(packed["final"] == perturbed["final"]);
}
