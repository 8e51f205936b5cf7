// The MXNet-style parameter server (algorithms/ps.cpp) on the quadratic problem, P ranks each a worker and a
// server. ps_sync is synchronous SGD on the averaged gradient: checked bit for bit against the same float
// arithmetic by hand (the sum in worker order, times 1/P, the optimizer), with keys whole or sliced over the
// servers and with the momentum buffer kept by the servers. ps_async converges; a worker pushes and pulls one
// message per key and server each step, each layer as back-propagation produces it; one worker is local SGD; a failed
// rank stops ps_sync, and ps_async unless its server holds no key.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {

// P ranks, 12 parameters in 3 blocks of 4: with bigarray_bound 4 every block is sliced 1 + 2 + 1 over 3 servers;
// with the default bound every block goes whole to server (k * 9973) mod P.
AlgoRun ps_run(const std::string& alg, int P, std::int64_t steps, bool sliced) {
  AlgoRun run;
  run.algorithm = alg;
  if (sliced) run.config["bigarray_bound"] = 4;
  run.problem.workers = P;
  run.problem.dim = 12;
  run.problem.blocks = 3;
  run.steps = steps;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}

// Synchronous SGD on the average of the P gradients (P = 1: local SGD), in the float arithmetic of the
// servers: g_w = x - c_w; s = ((g_0 + g_1) + ...) * (1/P); heavy ball b = mu b + s; x -= lr b.
std::vector<float> by_hand(const dts::test::QuadraticProblem& p, std::int64_t steps) {
  std::vector<float> x(p.dim, 0.0f), b(p.dim, 0.0f);
  for (std::int64_t t = 0; t < steps; ++t) {
    std::vector<float> s(p.dim, 0.0f);
    for (int w = 0; w < p.workers; ++w) {
      const auto c = p.target(w);
      for (std::size_t k = 0; k < p.dim; ++k) s[k] = w == 0 ? x[k] - c[k] : s[k] + (x[k] - c[k]);
    }
    for (std::size_t k = 0; k < p.dim; ++k) {
      if (p.workers > 1) s[k] *= 1.0f / static_cast<float>(p.workers);
      if (p.momentum == 0) {
        x[k] -= static_cast<float>(p.lr) * s[k];
      } else {
        b[k] = static_cast<float>(p.momentum) * b[k] + s[k];
        x[k] -= static_cast<float>(p.lr) * b[k];
      }
    }
  }
  return x;
}

}  // namespace

TEST_CASE("ps_sync is synchronous SGD on the averaged gradient, bit for bit", "[algorithms][ps]") {
  const auto [P, sliced, momentum] =
      GENERATE(table<int, bool, double>({{3, true, 0.0}, {3, false, 0.0}, {3, true, 0.9}, {4, false, 0.9}}));
  AlgoRun run = ps_run("ps_sync", P, 30, sliced);
  run.problem.momentum = momentum;
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  REQUIRE(out["final_rank"] == 0);
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(out["evals"] == 2 + (run.steps - 1) / 10);  // step 0, every 10th (harness), the final one
  REQUIRE(out["final"].get<std::vector<float>>() == by_hand(run.problem, run.steps));
  for (int r = 0; r < P; ++r) REQUIRE(out["steps"][r] == run.steps);
}

TEST_CASE("ps: one push and one pull per worker, key and server, each step", "[algorithms][ps]") {
  // Sliced: every block is cut over all P servers (itself included), P pieces a block; whole blocks with 4 ranks:
  // keys 0, 1, 2 on servers 0, 1, 2 (k * 9973 mod 4), rank 3 serves nothing: 3 pieces.
  const auto [alg, P, sliced, servers] = GENERATE(table<std::string, int, bool, int>(
      {{"ps_sync", 3, true, 3}, {"ps_sync", 4, false, 3}, {"ps_async", 3, true, 3}, {"ps_async", 4, false, 3}}));
  AlgoRun run = ps_run(alg, P, 20, sliced);
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  const std::int64_t pieces = sliced ? 3 * P : 3;
  const std::int64_t final_pieces = alg == "ps_async" ? servers : 0;  // each server's pieces to rank 0, at the end
  REQUIRE(out["messages"] == 2 * P * pieces * run.steps + final_pieces);
}

TEST_CASE("ps: a worker pushes each layer as back-propagation produces it", "[algorithms][ps]") {
  /* In details:
   *   o 2 workers, 1e6 parameters in 4 layers of 1 MB, whole keys: layers 0 and 2 on server 0, 1 and 3 on
   *     server 1 (k * 9973 mod 2); star of 1 GB/s, 10 us links; 10 ms of compute a step, a third forward, then
   *     5/3 ms of backward before each layer's ready() (QuadraticCompute), the last layer first
   *   o each worker pushes 2 MB to the other's server and pulls 2 MB back
   * Expectations
   *   o the first three layers' exchanges hide under the backward: a step takes the compute, then layer 0's
   *     push and pull to the remote server (1 MB each way, worker 1), ~12 ms, not the compute then all of a
   *     worker's pushes and pulls (~14 ms)
   */
  AlgoRun run = ps_run("ps_sync", 2, 3, false);
  run.problem.dim = 1'000'000;
  run.problem.blocks = 4;
  run.problem.step_time_s = 10e-3;
  run.platform = dts::test::pinned_star(2, 8e9, 10e-6);
  const auto out = dts::test::run_quadratic_ok(run);
  const double end_s = out["end_s"].get<double>();  // (the output's 1e6-float model is too long to print)
  INFO("end_s " << end_s);
  const double mb = 1e6 / 1e9 + 2 * 10e-6;  // 1 MB at 1 GB/s through two links
  CHECK(end_s >= 3 * (10e-3 + 2 * mb));
  CHECK(end_s < 3 * (10e-3 + 2 * mb) * 1.05);  // and the servers' sums and updates
  CHECK(end_s < 3 * (10e-3 + 4 * mb));
}

TEST_CASE("ps: servers on machines of their own train the same model", "[algorithms][ps]") {
  /* In details:
   *   o servers: dedicated, 3 workers, 12 parameters sliced over the 3 servers: ranks 0-2 serve, 3-5 train,
   *     on 6 hosts; 20 steps
   * Expectations
   *   o ps_sync: the same model as synchronous SGD by hand, reported by the first worker (rank 3)
   *   o a worker sends its gradient only (12 floats a step), a server its pieces' new values to every worker
   *     (3, 6 and 3 floats x 3 workers a step): a worker's NIC carries no server's traffic
   */
  const std::string alg = GENERATE("ps_sync", "ps_async");
  AlgoRun run = ps_run(alg, 3, 20, true);
  run.config["servers"] = "dedicated";
  run.platform = dts::test::pinned_star(6, 10e9, 5e-6);
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  REQUIRE(out["final_rank"] == 3);
  if (alg == "ps_sync") REQUIRE(out["final"].get<std::vector<float>>() == by_hand(run.problem, run.steps));
  for (int r = 3; r < 6; ++r) CHECK(out["bytes_sent"][r] == 20 * 12 * 4);
  const int floats[] = {3, 6, 3};  // each block sliced 1 + 2 + 1
  for (int r = 0; r < 3; ++r) {
    const int final_floats = alg == "ps_async" ? floats[r] : 0;  // its pieces to the first worker, at the end
    CHECK(out["bytes_sent"][r] == 4 * (20 * floats[r] * 3 + final_floats));
  }
}

TEST_CASE("ps: with one worker both are local SGD", "[algorithms][ps]") {
  const std::string alg = GENERATE("ps_sync", "ps_async");
  AlgoRun run = ps_run(alg, 1, 40, GENERATE(true, false));
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  REQUIRE(out["final"].get<std::vector<float>>() == by_hand(run.problem, run.steps));
}

TEST_CASE("ps_async converges on the quadratic", "[algorithms][ps]") {
  // Agreeing workers: onto their optimum. Disagreeing ones: each push moves a server's pieces toward one c_i,
  // so W circles the mean of the c_i within a few learning rates (as async_sgd's).
  AlgoRun run = ps_run("ps_async", 4, 300, true);
  run.problem.same_target = true;
  auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  REQUIRE(out["final_step"] == run.steps);
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  run.problem.same_target = false;
  run.problem.lr = 0.002;
  run.steps = 2000;
  out = dts::test::run_quadratic_ok(run);
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 2 * 4 * 0.002);
}

TEST_CASE("ps: a failed rank takes its server with it", "[algorithms][ps]") {
  /* In details:
   *   o 4 ranks, rank 2 fails a third of the way through; keys sliced (rank 2 serves a piece of each) or whole
   *     (rank 2 serves key 2), or one block only (key 0, on server 0: rank 2 serves nothing).
   * Expectations
   *   o ps_sync stops in every case (its servers wait for every push), naming rank 2;
   *   o ps_async stops when rank 2's server holds keys; when it holds none, server 0 drops rank 2 and the others
   *     run every step onto the optimum.
   */
  const std::string alg = GENERATE("ps_sync", "ps_async");
  const int layout = GENERATE(0, 1, 2);  // sliced, whole, one block
  AlgoRun run = ps_run(alg, 4, 60, layout == 0);
  if (layout == 2) run.problem.blocks = 1;
  run.problem.same_target = true;
  const auto whole = dts::test::run_quadratic_ok(run);
  run.failures = {{2, whole["end_s"].get<double>() / 3}};
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  if (alg == "ps_sync" || layout != 2) {
    REQUIRE(out.contains("error"));
    REQUIRE_THAT(out["error"].get<std::string>(), Catch::Contains("peer rank 2 failed"));
    return;
  }
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  for (const int r : {0, 1, 3}) REQUIRE(out["steps"][r] == run.steps);
  REQUIRE(out["steps"][2] < run.steps);
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
}
