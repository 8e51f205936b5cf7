// Synchronous EASGD on the quadratic problem. At the fixed point of eq. (1)-(2) the center is the mean of
// the workers and the workers' stationarity conditions sum to mean(x) = mean(c), so the center lands on
// the mean of the c_i exactly (synchronous: no oscillation). Also: tree message counts, the exchange's critical path,
// the overlap of variant 3 (max instead of sum), per-layer messages, and determinism under changed timing.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun sync_run(int P, int variant) {
  return dts::test::master_worker_run("easgd_sync", P, 300, {{"variant", variant}});
}
}  // namespace

TEST_CASE("easgd_sync converges to the mean of the targets with tree message counts", "[algorithms]") {
  const auto [P, variant, tau] =
      GENERATE(table<int, int, int>({{1, 1, 1}, {1, 2, 1}, {3, 1, 1}, {4, 2, 1}, {4, 3, 1}, {5, 1, 2}, {5, 3, 3}}));
  AlgoRun run = sync_run(P, variant);
  run.config["comm_period_steps"] = tau;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == (variant == 1 ? 0 : 1));  // the master reports W~
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  // Per exchange, a binomial broadcast and a binomial reduce over n tree members: n - 1 messages each;
  // the tree holds the CPU in variant 1.
  const int n = variant == 1 ? P + 1 : P;
  const std::int64_t exchanges = (run.steps + tau - 1) / tau;
  REQUIRE(out["messages"] == 2 * (n - 1) * exchanges);
}

TEST_CASE("easgd_sync: one exchange takes the trees' critical path in latencies", "[algorithms]") {
  /* In details:
   *   o variant 2 (trees over the P workers), 1 parameter, 1 Tb/s links with 50 us latency: a message
   *     takes m = 100 us + 32 ns; F/B takes F = 1 ms; updates are free; 10 steps
   *   o a binomial parent sends to its children one after the other, largest subtree first, each send
   *     delivered before the next; in the reduce, a member sends its partial sum once its subtree's arrived
   *   o the root (the master) is the critical path: F/B, then the broadcast and the reduce. Its broadcast
   *     ends after ceil(lg P) messages; its reduce waits for the subtree served last. P = 5: member 1 hears
   *     at 3 m and answers at 4 m, member 2 hears at 2 m, serves 3 at 3 m, hears back at 4 m and answers
   *     at 5 m: 5 messages. P = 2^k: 2 k messages (as many as the old all-at-once sends, whose member v
   *     heard after popcount(v) messages: 4 for P = 5 and 7).
   * Expectations
   *   o end = 10 * (F + messages m), up to the few ns of the 4-byte payloads
   */
  const auto [P, messages] = GENERATE(table<int, int>({{2, 2}, {4, 4}, {5, 5}, {7, 5}, {8, 6}}));
  AlgoRun run = sync_run(P, 2);
  run.problem.dim = 1;
  run.steps = 10;
  run.platform = dts::test::pinned_star(P + 1, 1e12, 50e-6);
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  const double m = 100e-6 + 32 / 1e12;
  REQUIRE(out["end_s"].get<double>() == Approx(10 * (1e-3 + messages * m)).epsilon(1e-6));
}

TEST_CASE("easgd_sync: variant 3 overlaps the exchange with F/B, with variant 2's numbers", "[algorithms]") {
  /* In details:
   *   o 2 workers (trees of one edge), 25,000 parameters (100 kB), star of 100 MB/s links with 10 us
   *     latency: m = 20 us + 1 ms; F/B takes F = 2 ms; updates are free; 20 steps
   * Expectations
   *   o variant 2: F/B, then broadcast and reduce: end = 20 (F + 2 m)
   *   o variant 3: both at once: end = 20 max(F, 2 m)
   *   o the same values in the same order: bit-identical centers
   */
  AlgoRun run = sync_run(2, 2);
  run.problem.dim = 25'000;
  run.problem.step_time_s = 2e-3;
  run.steps = 20;
  run.platform = dts::test::pinned_star(3, 8e8, 10e-6);
  const auto v2 = dts::test::run_quadratic(run);
  run.config["variant"] = 3;
  const auto v3 = dts::test::run_quadratic(run);
  REQUIRE(!v2.contains("error"));
  REQUIRE(!v3.contains("error"));
  const double m = 20e-6 + 1e5 / 1e8, F = 2e-3;
  REQUIRE(v2["end_s"].get<double>() == Approx(20 * (F + 2 * m)).epsilon(1e-9));
  REQUIRE(v3["end_s"].get<double>() == Approx(20 * std::max(F, 2 * m)).epsilon(1e-9));
  REQUIRE(v2["final"] == v3["final"]);
}

TEST_CASE("easgd_sync: per-layer messages give the same center, L times the messages and L alphas", "[algorithms]") {
  /* In details:
   *   o 2 workers, variant 2, 4,000 parameters in 4 layers; 100 MB/s links with 50 us latency; F = 1 ms
   * Expectations
   *   o packed: each step F + 2 (2 * 50 us + 16 kB / 100 MB/s)
   *   o per layer: the four pieces of a vector go one after the other on the edge: F + 2 (4 * 100 us + 160 us)
   */
  AlgoRun run = sync_run(2, 2);
  run.problem.dim = 4000;
  run.problem.blocks = 4;
  run.steps = 10;
  run.platform = dts::test::pinned_star(3, 8e8, 50e-6);
  const auto packed = dts::test::run_quadratic(run);
  run.config["packed"] = false;
  const auto layered = dts::test::run_quadratic(run);
  REQUIRE(!packed.contains("error"));
  REQUIRE(!layered.contains("error"));
  REQUIRE(packed["final"] == layered["final"]);
  REQUIRE(layered["messages"] == 4 * packed["messages"].get<std::int64_t>());
  REQUIRE(packed["end_s"].get<double>() == Approx(10 * (1e-3 + 2 * (100e-6 + 160e-6))).epsilon(1e-9));
  REQUIRE(layered["end_s"].get<double>() == Approx(10 * (1e-3 + 2 * (4 * 100e-6 + 160e-6))).epsilon(1e-9));
}

TEST_CASE("easgd_sync is deterministic: a straggler or another network changes the time, not the bits",
          "[algorithms]") {
  const int variant = GENERATE(1, 3);
  AlgoRun run = sync_run(4, variant);
  run.steps = 50;
  const auto reference = dts::test::run_quadratic(run);
  run.problem.slowdown = {1.0, 3.0, 1.0, 1.0};
  run.platform = dts::test::pinned_star(5, 1e8, 40e-6);
  const auto perturbed = dts::test::run_quadratic(run);
  REQUIRE(!reference.contains("error"));
  REQUIRE(!perturbed.contains("error"));
  REQUIRE(perturbed["end_s"].get<double>() > 2 * reference["end_s"].get<double>());
  REQUIRE(reference["final"] == perturbed["final"]);
  // easgd_async, for contrast: the straggler changes the order of the center's updates.
  run.algorithm = "easgd_async";
  run.config = nlohmann::json::object();
  run.problem.slowdown.clear();
  const auto async_reference = dts::test::run_quadratic(run);
  run.problem.slowdown = {1.0, 3.0, 1.0, 1.0};
  const auto async_perturbed = dts::test::run_quadratic(run);
  REQUIRE(async_reference["final"] != async_perturbed["final"]);
}

TEST_CASE("easgd_sync: elastic_alpha beyond 1 / P is refused (eq. 2 would not be a convex combination)",
          "[algorithms]") {
  AlgoRun run = sync_run(4, 3);
  run.config["elastic_alpha"] = 0.3;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(out.contains("error"));
  REQUIRE_THAT(out["error"].get<std::string>(), Catch::Contains("/algorithm/elastic_alpha"));
}
