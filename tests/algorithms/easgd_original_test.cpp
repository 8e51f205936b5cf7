// Round-robin EASGD on the quadratic problem: it reaches the mean of the c_i like every EASGD; the master
// serves the workers one at a time in rank order, 2 messages per exchange; Original EASGD* (no overlap)
// costs exactly 2 messages + one F/B per exchange, while the overlapped timing hides the F/B behind the
// other workers' exchanges with the same numbers; and a straggler holds everybody back, where the FCFS
// center of easgd_async lets the others run ahead.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun original_run(int P, int tau) {
  return dts::test::master_worker_run("easgd_original", P, 600, {{"comm_period_steps", tau}});
}
}  // namespace

TEST_CASE("easgd_original: agreeing workers pull the center onto their optimum, 2 messages per exchange",
          "[algorithms]") {
  const auto [P, tau] = GENERATE(table<int, int>({{1, 1}, {3, 1}, {4, 3}}));
  AlgoRun run = original_run(P, tau);
  run.problem.same_target = true;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);  // the center is the reported model
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  // Every worker exchanges ceil(steps / tau) times, W~ down and W^j up; no shutdown messages.
  const std::int64_t exchanges = (run.steps + tau - 1) / tau;
  REQUIRE(out["messages"] == 2 * P * exchanges);
}

TEST_CASE("easgd_original: with disagreeing workers the center settles at the mean of the optima", "[algorithms]") {
  AlgoRun run = original_run(4, 1);
  const double alpha = 0.005;
  run.config["elastic_alpha"] = alpha;
  run.steps = 3000;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  // As for easgd_async: one update moves the center by at most 2 alpha per coordinate.
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * alpha);
}

TEST_CASE("easgd_original: Original EASGD* serializes F/B, the overlapped form hides it", "[algorithms]") {
  /* In details:
   *   o 3 workers, 1000 parameters (4 kB), star of 100 MB/s links with 10 us latency: one message takes
   *     m = 2 * 10 us + 4 kB / 100 MB/s = 60 us; F/B takes F = 1 ms; updates are free; 20 steps
   * Expectations
   *   o Original EASGD*: the master sends W~ (m), worker j computes (F), sends W^j (m), then the next
   *     worker: end = 20 * 3 * (2 m + F)
   *   o Original EASGD: every worker computes while the master serves the others (2 m each, less than F),
   *     so a worker's cycle is F + m (its W~ is waiting when its F/B ends); the first round staggers the
   *     workers by 2 m each: end = 20 (F + m) + (2 P - 2) m
   *   o the same arithmetic in the same order: bit-identical centers
   */
  AlgoRun run = original_run(3, 1);
  run.problem.dim = 1000;
  run.steps = 20;
  run.platform = dts::test::pinned_star(4, 8e8, 10e-6);
  run.config["overlap"] = false;
  const auto serial = dts::test::run_quadratic(run);
  run.config["overlap"] = true;
  const auto overlapped = dts::test::run_quadratic(run);
  REQUIRE(!serial.contains("error"));
  REQUIRE(!overlapped.contains("error"));
  const double m = 2 * 10e-6 + 4000 / 1e8, F = 1e-3;
  REQUIRE(serial["end_s"].get<double>() == Approx(20 * 3 * (2 * m + F)).epsilon(1e-9));
  REQUIRE(overlapped["end_s"].get<double>() == Approx(20 * (F + m) + 4 * m).epsilon(1e-9));
  REQUIRE(serial["final"] == overlapped["final"]);
}

TEST_CASE("easgd_original: a straggler holds every worker back, unlike easgd_async's FCFS center", "[algorithms]") {
  /* In details:
   *   o 3 workers, worker 2 (rank 2) computes 4 times slower (4 ms per F/B, the others 1 ms); tiny messages
   * Expectations
   *   o round robin: worker 1 waits for worker 2 every round, so it finishes with the straggler
   *   o FCFS (easgd_async): worker 1 finishes its 40 steps near 40 ms, long before the straggler (160 ms)
   */
  AlgoRun run = original_run(3, 1);
  run.steps = 40;
  run.problem.slowdown = {1.0, 4.0, 1.0};
  const auto original = dts::test::run_quadratic(run);
  run.algorithm = "easgd_async";
  run.config.erase("comm_period_steps");
  const auto fcfs = dts::test::run_quadratic(run);
  REQUIRE(!original.contains("error"));
  REQUIRE(!fcfs.contains("error"));
  const auto fast_end = [](const nlohmann::json& out) { return out["last_step_s"][1].get<double>(); };
  const auto slow_end = [](const nlohmann::json& out) { return out["last_step_s"][2].get<double>(); };
  REQUIRE(slow_end(original) == Approx(40 * 4e-3).epsilon(0.01));
  REQUIRE(fast_end(original) > 0.95 * slow_end(original));
  REQUIRE(slow_end(fcfs) == Approx(40 * 4e-3).epsilon(0.01));
  REQUIRE(fast_end(fcfs) < 0.3 * slow_end(fcfs));
}

TEST_CASE("easgd_original: per-layer messages give the same center with L times the messages", "[algorithms]") {
  AlgoRun run = original_run(3, 2);
  run.steps = 50;
  run.problem.blocks = 3;
  const auto packed = dts::test::run_quadratic(run);
  run.config["packed"] = false;
  const auto layered = dts::test::run_quadratic(run);
  REQUIRE(!packed.contains("error"));
  REQUIRE(!layered.contains("error"));
  REQUIRE(packed["final"] == layered["final"]);
  REQUIRE(layered["messages"] == 3 * packed["messages"].get<std::int64_t>());
}
