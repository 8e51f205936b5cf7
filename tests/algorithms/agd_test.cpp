// AGD (papers/gossipgrad.md §3.2-3.3) on the quadratic problem: the layer-wise allreduce is allreduce_sgd's
// math, its overlap with the backward pass shortens the step, and averaging every log2(P) steps sends a
// log2(P)-th of the bytes. The harness applies no learning-rate factor, so lr_scale plays no part here.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {

AlgoRun quadratic_run(const char* algorithm, int P, nlohmann::json config) {
  AlgoRun run;
  run.algorithm = algorithm;
  run.config = std::move(config);
  run.problem.workers = P;
  run.problem.dim = 10;    // not a multiple of P: uneven ring chunks
  run.problem.blocks = 3;  // three layers, each its own allreduce
  run.steps = 200;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}

// The layer-wise tests' run: 4 workers, 1e6 parameters in 4 layers (4 MB), 10 ms of compute per step, 3 steps,
// a ring allreduce, on a star of `link_bps` (bits per second) with 10 us links.
AlgoRun layered_run(double link_bps) {
  auto run = quadratic_run("agd", 4, {{"allreduce", "ring"}});
  run.problem.dim = 1'000'000;
  run.problem.blocks = 4;
  run.problem.step_time_s = 10e-3;
  run.steps = 3;
  run.platform = dts::test::pinned_star(4, link_bps, 10e-6);
  return run;
}

}  // namespace

TEST_CASE("agd ends on allreduce_sgd's model with the same allreduce", "[algorithms]") {
  /* The tree and the hypercube add each float in the same order whatever slice they reduce, so layer by layer
   * or whole, the sums are equal bit for bit; the ring's order depends on the chunking, equal at P = 2. */
  const auto [P, collective] =
      GENERATE(table<int, const char*>({{4, "tree"}, {5, "tree"}, {4, "hypercube"}, {6, "hypercube"}, {2, "ring"}}));
  const auto agd = dts::test::run_quadratic(quadratic_run("agd", P, {{"allreduce", collective}}));
  const auto sgd = dts::test::run_quadratic(quadratic_run("allreduce_sgd", P, {{"allreduce", collective}}));
  INFO(agd.dump());
  REQUIRE(!agd.contains("error"));
  REQUIRE(!sgd.contains("error"));
  REQUIRE(agd["final"] == sgd["final"]);
  REQUIRE(agd["final_step"] == 200);
}

TEST_CASE("agd converges to the mean of the targets with every allreduce", "[algorithms]") {
  const auto [P, collective, per_node] = GENERATE(table<int, const char*, int>({{3, "ring", 1},
                                                                                {8, "ring", 1},
                                                                                {5, "tree", 1},
                                                                                {8, "hierarchical_ring", 4},
                                                                                {6, "hierarchical_ring", 3},
                                                                                {4, "hierarchical_ring", 1}}));
  const auto run = quadratic_run("agd", P, {{"allreduce", collective}, {"ranks_per_node", per_node}});
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);  // 0.9^200 ~ 7e-10
  for (const auto& s : out["steps"]) REQUIRE(s == 200);
}

TEST_CASE("agd: the per-layer allreduce overlaps the backward pass", "[algorithms]") {
  /* In details:
   *   o 4 workers, 1e6 parameters in 4 layers (4 MB), star of 1 GB/s, 10 us links; 10 ms of compute per step,
   *     a third forward, then 5 ms of backward before each layer's ready() (QuadraticCompute)
   *   o a ring allreduce of the whole gradient takes 2 (P - 1) (20 us + 1 MB / 1 GB/s) ~ 6.1 ms
   * Expectations
   *   o allreduce_sgd: compute then the allreduce, ~16.1 ms a step
   *   o agd: the first three layers' allreduces (~1.6 ms each) hide under the next layers' backward; only the
   *     last layer's is exposed: ~11.5 ms a step, never below the 10 ms of compute
   */
  auto run = layered_run(8e9);
  const auto agd = dts::test::run_quadratic(run);
  run.algorithm = "allreduce_sgd";
  const auto sgd = dts::test::run_quadratic(run);
  REQUIRE(!agd.contains("error"));
  REQUIRE(!sgd.contains("error"));
  const double ring = 2 * 3 * (2 * 10e-6 + 1e6 / 1e9), layer = 2 * 3 * (2 * 10e-6 + 0.25e6 / 1e9);
  REQUIRE(sgd["end_s"].get<double>() == Approx(3 * (10e-3 + ring)).epsilon(1e-6));
  REQUIRE(agd["end_s"].get<double>() == Approx(3 * (10e-3 + layer)).epsilon(1e-3));
  REQUIRE(agd["end_s"].get<double>() >= 3 * 10e-3);
  REQUIRE(agd["bytes_sent"] == sgd["bytes_sent"]);  // the same data, in four allreduces
}

TEST_CASE("agd: layers that wait for the communication thread go one at a time, in order, back to back",
          "[algorithms]") {
  /* The overlap test's run on a network four times slower: a layer's ring allreduce takes
   * 2 (P - 1) (20 us + 1 MB / 4 / 250 MB/s) ~ 6.1 ms, longer than a layer's backward (1.7 ms), so layers queue up
   * behind the first: the first is ready at 10 / 3 + 10 * 2 / 3 / 4 = 5 ms, then the four allreduces run one after
   * the other (one activity drains the queue); a step ends after them. */
  const auto run = layered_run(2e9);
  const auto agd = dts::test::run_quadratic(run);
  REQUIRE(!agd.contains("error"));
  const double layer = 2 * 3 * (2 * 10e-6 + 0.25e6 / 250e6);
  REQUIRE(agd["end_s"].get<double>() == Approx(3 * (5e-3 + 4 * layer)).epsilon(1e-3));
}

TEST_CASE("agd average_every: local steps, weights averaged every log2(P) steps", "[algorithms]") {
  /* In details:
   *   o 8 workers, 12 steps: log_p averages every 3 steps, 4 ring allreduces of the weights against 12 of
   *     the gradients; the quadratic's local steps contract toward each worker's target, and the average of
   *     the workers' models toward the mean of the targets (identity Hessians)
   */
  auto every = quadratic_run("agd", 8, {{"allreduce", "ring"}, {"average_every", "log_p"}});
  every.problem.blocks = 1;
  every.steps = 12;
  auto grads = every;
  grads.config = {{"allreduce", "ring"}};
  const auto a = dts::test::run_quadratic(every), g = dts::test::run_quadratic(grads);
  INFO(a.dump());
  REQUIRE(!a.contains("error"));
  REQUIRE(!g.contains("error"));
  for (std::size_t r = 0; r < 8; ++r) {
    REQUIRE(a["bytes_sent"][r].get<double>() == Approx(g["bytes_sent"][r].get<double>() / 3));
  }
  every.steps = grads.steps = 300;
  const auto long_run = dts::test::run_quadratic(every);
  REQUIRE(dts::test::distance_to_answer(long_run, every.problem) < 1e-5);
  // Averaging every step is still not allreduce_sgd: weights, not gradients, are averaged.
  every.config["average_every"] = 5;
  every.steps = 12;  // averages after steps 5, 10 and the last
  const auto five = dts::test::run_quadratic(every);
  REQUIRE(five["bytes_sent"][0].get<double>() == Approx(g["bytes_sent"][0].get<double>() / 4));
}
