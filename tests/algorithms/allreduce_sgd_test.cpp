// Synchronous allreduce SGD on the quadratic problem: the replicas follow gradient descent on the mean of
// the f_i, so they reach the mean of the c_i; the ring and the tree send the message counts their
// algorithms predict.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

TEST_CASE("allreduce_sgd converges to the mean of the targets", "[algorithms]") {
  const auto [P, collective] = GENERATE(table<int, const char*>(
      {{1, "ring"}, {3, "ring"}, {4, "ring"}, {8, "ring"}, {3, "tree"}, {5, "tree"}, {8, "tree"}}));
  AlgoRun run;
  run.algorithm = "allreduce_sgd";
  run.config = {{"allreduce", collective}};
  run.problem.workers = P;
  run.problem.dim = 10;  // not a multiple of P: uneven ring chunks
  run.steps = 200;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  // Each step contracts the error by (1 - lr): 0.9^200 ~ 7e-10.
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  REQUIRE(out["final_step"] == 200);
  for (const auto& s : out["steps"]) REQUIRE(s == 200);
  // Messages per step: ring 2 P (P - 1); binomial tree P - 1 up and P - 1 down.
  const std::int64_t per_step = std::string(collective) == "ring" ? 2 * P * (P - 1) : 2 * (P - 1);
  REQUIRE(out["messages"] == per_step * 200);
}

TEST_CASE("allreduce_sgd: a ring step costs what the alpha-beta model says", "[algorithms]") {
  /* In details:
   *   o 4 workers, 1e6 parameters (4 MB), star of 1 GB/s links with 10 us latency, factors pinned to 1,
   *     compute charged 1 ms per step (elementwise charges are zero in the quadratic problem)
   * Expectations
   *   o one step = 1 ms + 2 (P - 1) * (2 * 10 us + (4 MB / P) / 1 GB/s): every ring step moves one chunk per
   *     link in each direction, without contention on the split-duplex links
   */
  AlgoRun run;
  run.algorithm = "allreduce_sgd";
  run.problem.workers = 4;
  run.problem.dim = 1'000'000;
  run.steps = 3;
  run.platform = dts::test::pinned_star(4, 8e9, 10e-6);
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  const double step = 1e-3 + 2 * 3 * (2 * 10e-6 + 1e6 / 1e9);
  REQUIRE(out["end_s"].get<double>() == Approx(3 * step).epsilon(1e-6));
}

TEST_CASE("allreduce_sgd: collective fidelity gives the same model, and the time within 2 %",
          "[algorithms][fidelity]") {
  /* In details:
   *   o 8 workers on a star of 10 Gb/s, 5 us links (LV08 factors pinned to 1), 1e5 parameters; worker 3 is a
   *     straggler (its steps take 3x longer), so collectives start at different times on different members
   * Expectations
   *   o the final model is bit for bit the same at both fidelities (the engine reproduces the sums' order)
   *   o the simulated end time agrees within the bound of tests/sim/collective_fidelity_test.cpp
   */
  const char* collective = GENERATE("ring", "tree", "hypercube");
  AlgoRun run;
  run.algorithm = "allreduce_sgd";
  run.config = {{"allreduce", collective}};
  run.problem.workers = 8;
  run.problem.dim = 100'003;
  run.problem.slowdown = {1, 1, 1, 3};
  run.steps = 20;
  run.platform = dts::test::pinned_star(8, 10e9, 5e-6);
  const auto message = dts::test::run_quadratic(run);
  run.fidelity = dts::sim::Fidelity::kCollective;
  const auto coll = dts::test::run_quadratic(run);
  REQUIRE(!message.contains("error"));
  REQUIRE(!coll.contains("error"));
  REQUIRE(message["final"] == coll["final"]);
  REQUIRE(message["messages"] == coll["messages"]);
  REQUIRE(message["bytes_sent"] == coll["bytes_sent"]);
  REQUIRE(coll["end_s"].get<double>() == Approx(message["end_s"].get<double>()).epsilon(0.02));
}

TEST_CASE("allreduce_sgd: auto runs what Open MPI's fixed decision picks, by the message's size", "[algorithms]") {
  /* In details:
   *   o 4 workers, 20 steps, a gradient of 2,499 floats (9,996 bytes) and of 2,500 (10,000 bytes, Open MPI's
   *     intermediate_message), each run with auto and with the algorithm it should pick
   * Expectations
   *   o below 10,000 bytes auto is the hypercube, from 10,000 on the ring: the same final model, messages
   *     (lg P = 2 per worker and step, against the ring's 2 (P - 1) = 6) and end time as that algorithm's run
   */
  const auto [dim, picked, per_step] =
      GENERATE(table<std::size_t, const char*, std::int64_t>({{2'499, "hypercube", 4 * 2}, {2'500, "ring", 4 * 6}}));
  AlgoRun run;
  run.algorithm = "allreduce_sgd";
  run.problem.workers = 4;
  run.problem.dim = dim;
  run.steps = 20;
  run.platform = dts::test::pinned_star(4, 10e9, 5e-6);
  run.config = {{"allreduce", "auto"}};
  const auto chosen = dts::test::run_quadratic(run);
  run.config = {{"allreduce", picked}};
  const auto direct = dts::test::run_quadratic(run);
  INFO(chosen.dump());
  REQUIRE(!chosen.contains("error"));
  REQUIRE(chosen["messages"] == per_step * 20);
  REQUIRE(chosen["final"] == direct["final"]);
  REQUIRE(chosen["messages"] == direct["messages"]);
  REQUIRE(chosen["end_s"] == direct["end_s"]);
}
