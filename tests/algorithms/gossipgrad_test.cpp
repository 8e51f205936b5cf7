// GossipGraD on the quadratic problem (papers/gossipgrad.md §9, G10). The exchange mixes with weight 1/2
// along a permutation, a doubly stochastic step, so it conserves the average of the models; on the quadratic
// the average follows centralized gradient descent and converges to the mean of the c_i. Defining
// properties: one round of pure averaging reaches the exact mean (p = 2^L); one model message out and one in
// per node and step whatever p; the ring shuffle moves each sample one hop down the ring per use, so it comes
// back to a node only after every other node has used it; the progress models order the step time.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun gg_run(int P, std::int64_t steps, nlohmann::json config = nlohmann::json::object()) {
  AlgoRun run;
  run.algorithm = "gossipgrad";
  run.config = std::move(config);
  run.problem.workers = P;
  run.problem.dim = 7;
  run.steps = steps;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}
}  // namespace

TEST_CASE("gossipgrad: one round of pure averaging gives rank 0 the exact mean (p = 2^L)", "[algorithms]") {
  /* In details:
   *   o workers start at their own c_i (init_at_target), lr 0, no momentum: only the exchanges move models
   *   o log2 P steps, the model of rank 0 reported (final_model rank0), every lag and both patterns
   * Expectations
   *   o rank 0 holds the mean of the c_i to float rounding; one step fewer leaves it away from the mean
   *   (every node's exactness is tests/unit/gossipgrad_schedule_test.cpp's) */
  const int P = GENERATE(4, 8);
  const std::string pattern = GENERATE("dissemination", "hypercube");
  const nlohmann::json lag = GENERATE(nlohmann::json(1), nlohmann::json(0), nlohmann::json("literal"));
  const std::int64_t L = P == 4 ? 2 : 3;
  INFO("P " << P << " " << pattern << " lag " << lag.dump());
  for (const std::int64_t steps : {L, L - 1}) {
    AlgoRun run = gg_run(P, steps, {{"pattern", pattern}, {"lag", lag}, {"final_model", "rank0"}});
    run.problem.lr = 0;
    run.problem.init_at_target = true;
    const auto out = dts::test::run_quadratic(run);
    INFO(out.dump());
    REQUIRE(!out.contains("error"));
    const double d = dts::test::distance_to_answer(out, run.problem);
    if (steps == L) {
      REQUIRE(d < 1e-6);
    } else {
      REQUIRE(d > 1e-3);
    }
  }
}

TEST_CASE("gossipgrad: one model message out and one in per node and step, whatever p", "[algorithms]") {
  /* Weights and the momentum buffer travel in one message of 2 dim floats; without a shard there is no
   * shuffle, and final_model rank0 adds no allreduce. With a shard each node also sends one shuffle message
   * of batch x (row bytes + 4) per step. */
  const int P = GENERATE(2, 4, 6, 8);
  const std::int64_t steps = 5;
  for (const bool shard : {false, true}) {
    AlgoRun run = gg_run(P, steps, {{"final_model", "rank0"}});
    run.problem.momentum = 0.5;
    if (shard) run.problem.shard_rows = 4;
    const auto out = dts::test::run_quadratic(run);
    INFO(out.dump());
    REQUIRE(!out.contains("error"));
    const std::uint64_t model = 4 * 2 * run.problem.dim, shuffle = shard ? 2 * (100 + 4) : 0;
    REQUIRE(out["messages"] == steps * P * (shard ? 2 : 1));
    for (const auto& b : out["bytes_sent"]) REQUIRE(b.get<std::uint64_t>() == steps * (model + shuffle));
  }
  // Without the momentum buffer: the weights alone.
  AlgoRun run = gg_run(4, steps, {{"final_model", "rank0"}, {"exchange_momentum", false}});
  run.problem.momentum = 0.5;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  for (const auto& b : out["bytes_sent"]) REQUIRE(b.get<std::uint64_t>() == steps * 4 * run.problem.dim);
}

TEST_CASE("gossipgrad: the ring shuffle returns a sample to a node only after every other node used it",
          "[algorithms]") {
  /* P workers, shards of 4 rows, 2 per batch (2 steps per local epoch); rows_used lists what each worker
   * trained on. A row is sent to rank - 1 after each use, so its uses go home, home - 1, home - 2, ...
   * (mod P), one per local epoch of its holder, and it is back home after P uses. */
  const int P = GENERATE(3, 4, 8);
  const std::int64_t steps = 2 * (P + 1);  // P + 1 local epochs
  AlgoRun run = gg_run(P, steps);
  run.problem.shard_rows = 4;
  run.problem.batch_rows = 2;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  std::map<std::uint32_t, std::vector<std::pair<std::int64_t, int>>> uses;  // row -> (step, worker)
  for (int w = 0; w < P; ++w) {
    const auto rows = out["rows_used"][w].get<std::vector<std::uint32_t>>();
    REQUIRE(rows.size() == static_cast<std::size_t>(2 * steps));
    for (std::size_t i = 0; i < rows.size(); ++i) uses[rows[i]].emplace_back(static_cast<std::int64_t>(i / 2), w);
  }
  REQUIRE(uses.size() == static_cast<std::size_t>(4 * P));
  for (auto& [row, u] : uses) {
    std::sort(u.begin(), u.end());
    INFO("row " << row);
    REQUIRE(u.size() == static_cast<std::size_t>(P + 1));
    REQUIRE(u.front().second == static_cast<int>(row) / 4);  // first used at home
    for (std::size_t k = 1; k < u.size(); ++k) {
      REQUIRE(u[k].second == (u[k - 1].second + P - 1) % P);  // one hop down the ring per use
      REQUIRE(u[k].first - u[k - 1].first == 2);              // one local epoch later
    }
    REQUIRE(u.back().second == u.front().second);  // home again after P uses
  }
}

TEST_CASE("gossipgrad converges to the mean of the targets", "[algorithms]") {
  const int P = GENERATE(4, 6, 8);
  const std::string pattern = GENERATE("dissemination", "hypercube");
  const nlohmann::json lag = GENERATE(nlohmann::json(1), nlohmann::json(0), nlohmann::json("literal"));
  if (pattern == "hypercube" && P == 6) return;
  INFO("P " << P << " " << pattern << " lag " << lag.dump());
  AlgoRun run = gg_run(P, 300, {{"pattern", pattern}, {"lag", lag}});
  run.problem.momentum = 0.5;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  for (const auto& s : out["steps"]) REQUIRE(s == 300);
}

TEST_CASE("gossipgrad: hypercube with workers not a power of two is a config error naming the key", "[algorithms]") {
  const auto out = dts::test::run_quadratic(gg_run(6, 3, {{"pattern", "hypercube"}}));
  REQUIRE(out.contains("error"));
  REQUIRE_THAT(out["error"].get<std::string>(), Catch::Contains("/algorithm/pattern"));
  const auto bad_lag = dts::test::run_quadratic(gg_run(4, 3, {{"lag", "late"}}));
  REQUIRE_THAT(bad_lag.value("error", ""), Catch::Contains("/algorithm/lag"));
}

TEST_CASE("gossipgrad: progress models order the step time; eager messages ignore them", "[algorithms]") {
  /* 50,000 floats of weights (200 kB, above the 64 kB eager threshold; no momentum) over 1 Gb/s links take
   * ~1.6 ms per exchange against a 2 ms step (1 ms forward, 1 ms backward here). thread overlaps the whole
   * step, testall only from the test point after the forward pass, none not at all: thread < testall < none.
   * With the threshold above the message every model sends at once: the same times. */
  std::map<std::string, double> end_s, eager_s;
  for (const std::string progress : {"thread", "testall", "none"}) {
    for (const bool eager : {false, true}) {
      AlgoRun run = gg_run(4, 6, {{"progress", progress}, {"final_model", "rank0"}});
      if (eager) run.config["eager_threshold_bytes"] = 1 << 20;
      run.problem.dim = 50000;
      run.problem.step_time_s = 2e-3;
      run.platform = dts::test::pinned_star(4, 1e9, 5e-6);
      const auto out = dts::test::run_quadratic(run);
      INFO(out.dump().substr(0, 400));
      REQUIRE(!out.contains("error"));
      (eager ? eager_s : end_s)[progress] = out["end_s"].get<double>();
    }
  }
  INFO("thread " << end_s["thread"] << " testall " << end_s["testall"] << " none " << end_s["none"]);
  REQUIRE(end_s["thread"] < end_s["testall"]);
  REQUIRE(end_s["testall"] < end_s["none"]);
  REQUIRE(eager_s["testall"] == eager_s["thread"]);
  REQUIRE(eager_s["none"] == eager_s["thread"]);
}
