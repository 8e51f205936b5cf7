// Gossiping SGD on the quadratic problem. Its defining behaviour: the pairwise exchange is symmetric, so it
// conserves the average of the models; on the quadratic (gradients linear in x) the average therefore
// follows centralized gradient descent on the mean of the f_i exactly, whatever the pairing, and converges
// to the mean of the c_i.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "algorithms/gossip_sgd.hpp"
#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;

namespace {
AlgoRun gossip_run(int P, std::int64_t steps) {
  AlgoRun run;
  run.algorithm = "gossip_sgd";
  run.config = {{"peer_seed", 5}};
  run.problem.workers = P;
  run.problem.dim = 7;
  run.steps = steps;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}
}  // namespace

TEST_CASE("gossip_peers: a seeded random perfect matching, the same on every call", "[algorithms]") {
  const int P = GENERATE(2, 7, 16);
  std::set<std::vector<dts::Rank>> seen;
  for (std::int64_t step = 0; step < 8; ++step) {
    const auto peer = dts::gossip_peers(P, 3, step);
    REQUIRE(peer == dts::gossip_peers(P, 3, step));
    int alone = 0;
    for (int i = 0; i < P; ++i) {
      const dts::Rank j = peer[static_cast<std::size_t>(i)];
      if (j < 0) {
        ++alone;
        continue;
      }
      REQUIRE(j != i);
      REQUIRE(peer[static_cast<std::size_t>(j)] == i);
    }
    REQUIRE(alone == P % 2);
    seen.insert(peer);
  }
  if (P > 2) REQUIRE(seen.size() > 1);  // the peers change from step to step
}

TEST_CASE("gossip_sgd: the exchanges conserve the average of the models", "[algorithms]") {
  /* In details:
   *   o P workers start at x = 0; worker i takes x_i -= lr (x_i - c_i), then averages with its peer
   * Expectations
   *   o the average of the models after k steps is centralized gradient descent's: (1 - (1 - lr)^k) mean(c),
   *     to float rounding, whatever the pairing (each worker's own model differs: its own c_i and peers)
   */
  const int P = GENERATE(4, 5, 8);
  const std::int64_t k = 3;
  const AlgoRun run = gossip_run(P, k);
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  const auto x = out.at("final").get<std::vector<double>>();
  const auto mean = run.problem.mean_target();
  const double f = 1.0 - std::pow(1.0 - run.problem.lr, static_cast<double>(k));
  for (std::size_t d = 0; d < mean.size(); ++d) REQUIRE(x[d] == Approx(f * mean[d]).margin(1e-6));
  // Messages: one per worker and step in each exchange (every worker but one when P is odd), then the
  // tree allreduce of the average: 2 (P - 1).
  REQUIRE(out["messages"] == k * (P - P % 2) + 2 * (P - 1));
}

TEST_CASE("gossip_sgd converges to the mean of the targets", "[algorithms]") {
  const int P = GENERATE(3, 8);
  const AlgoRun run = gossip_run(P, 200);
  const auto out = dts::test::run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(dts::test::distance_to_answer(out, run.problem) < 1e-5);
  for (const auto& s : out["steps"]) REQUIRE(s == 200);
}

TEST_CASE("gossip_sgd: collective fidelity gives the same model and time", "[algorithms][fidelity]") {
  AlgoRun run = gossip_run(6, 20);
  const auto message = dts::test::run_quadratic(run);
  run.fidelity = dts::sim::Fidelity::kCollective;
  const auto coll = dts::test::run_quadratic(run);
  REQUIRE(!message.contains("error"));
  REQUIRE(message["final"] == coll["final"]);
  REQUIRE(message["messages"] == coll["messages"]);
  REQUIRE(coll["end_s"].get<double>() == Approx(message["end_s"].get<double>()).epsilon(1e-9));
}
