// Async MEASGD is easgd_async run with the momentum optimizer (algorithms/momentum_aliases.cpp). With one
// worker the asynchronous order is fixed, so the center can be checked against eq. (5)-(6) and (2) written
// out by hand; with several agreeing workers the center lands on their optimum; and any optimizer kind but
// "momentum" is refused.
#include <catch2/catch.hpp>

#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun measgd_run(int P) {
  AlgoRun run = dts::test::master_worker_run("measgd_async", P, 400, {{"optimizer", {{"kind", "momentum"}}}});
  run.problem.momentum = 0.9;  // what the runner's optimizer would do with kind "momentum"
  run.problem.lr = 0.05;
  return run;
}
}  // namespace

TEST_CASE("measgd_async: the center follows eq. (5)-(6) on the worker and eq. (2) on the master", "[algorithms]") {
  AlgoRun run = measgd_run(1);
  const double eta = 0.05, mu = 0.9, alpha = 0.3;
  run.config["elastic_alpha"] = alpha;
  run.steps = 40;
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  const auto c = run.problem.target(0);
  const auto final = out["final"].get<std::vector<double>>();
  for (std::size_t k = 0; k < c.size(); ++k) {
    double w = 0, v = 0, center = 0;  // W^1_1 = W~_1 = 0, V_1 = 0
    for (int t = 0; t < run.steps; ++t) {
      const double grad = w - c[k];                      // dW at W_t
      v = mu * v - eta * grad;                           // (5)
      const double next = w + v - alpha * (w - center);  // (6), with W~_t
      center += alpha * (w - center);                    // (2), single worker, with W_t
      w = next;
    }
    REQUIRE(final[k] == Approx(center).margin(1e-6));
  }
}

TEST_CASE("measgd_async: agreeing workers pull the center onto their optimum", "[algorithms]") {
  AlgoRun run = measgd_run(4);
  run.problem.same_target = true;
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
}

TEST_CASE("measgd_async and async_msgd need the momentum optimizer", "[algorithms]") {
  const auto [name, optimizer] =
      GENERATE(table<const char*, nlohmann::json>({{"measgd_async", nlohmann::json::object()},
                                                   {"measgd_async", {{"kind", "nesterov"}}},
                                                   {"async_msgd", {{"kind", "sgd"}}}}));
  AlgoRun run = measgd_run(2);
  run.algorithm = name;
  run.config = optimizer.empty() ? nlohmann::json::object() : nlohmann::json{{"optimizer", optimizer}};
  const auto out = dts::test::run_quadratic(run);
  REQUIRE(out.contains("error"));
  REQUIRE_THAT(out["error"].get<std::string>(), Catch::Contains("/algorithm/optimizer/kind"));
}
