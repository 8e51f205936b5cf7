// BIDMach's grid (algorithms/bidmach): one line round mixes every model toward the line mean by alpha and
// conserves the line's mean; on the quadratic the grid of 2 x 2 converges to the answer, with the messages of its
// protocol counted one by one; a learner slowed 4x lets quorums below 1 leave it behind.
#include <catch2/catch.hpp>

#include <cmath>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/bidmach/dimension_loop.hpp"
#include "algorithms/bidmach/grid_master.hpp"
#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/null_recorder.hpp"

using dts::test::AlgoRun;
using nlohmann::json;

namespace {

std::vector<float> model_of(int r) {
  return {1.0f * static_cast<float>(r + 1), 2.0f * static_cast<float>(r + 1), -3.0f, 0.5f};
}

AlgoRun grid_run(int P, std::int64_t steps, json config) {
  AlgoRun run;
  run.algorithm = "bidmach_grid";
  config["startup_poll_s"] = 0;
  run.config = std::move(config);
  run.problem.workers = P;
  run.problem.dim = 8;
  run.steps = steps;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}

}  // namespace

TEST_CASE("bidmach: a line round mixes each live model toward the line mean by alpha (beta = 0)",
          "[algorithms][bidmach]") {
  const int P = 3;
  const float alpha = 0.3f;
  auto out = dts::test::simulate(dts::test::pinned_star(P, 1e9, 10e-6), P, [&](auto& comm, auto& node, auto& o) {
    dts::CollectiveOnlyCompute compute(4);
    dts::test::NullRecorder recorder;
    dts::Context ctx{comm, compute, node, recorder, P, 1};
    dts::bidmach::NodeModel model;
    model.params = dts::Vec(4, true);
    const std::vector<float> mine = model_of(comm.rank());
    std::copy(mine.begin(), mine.end(), model.params.data().begin());
    model.lock = node.make_mutex();
    model.learner_steps = 1;
    model.learner_done = true;
    dts::bidmach::GridConfig cfg;
    cfg.alpha = alpha;
    cfg.startup_poll_s = 0;
    dts::bidmach::DimensionLoop loop(ctx, model, cfg, 0, {{0, 1, 2}, 0});
    dts::Request done = loop.learner_done();  // learners already done: the master runs one round, then stops
    loop.run();
    done.wait_ok();
    o["m"] = std::vector<float>(model.params.data().begin(), model.params.data().end());
    o["rounds"] = loop.stats().rounds;
  });
  REQUIRE(!out.contains("error"));
  for (int r = 0; r < P; ++r) {
    INFO("rank " << r);
    CHECK(out["rank"][r]["rounds"] == 1);
    for (std::size_t i = 0; i < 4; ++i) {
      const float mean = (model_of(0)[i] + model_of(1)[i] + model_of(2)[i]) * (1.0f / 3.0f);
      const float want = model_of(r)[i] * (1.0f - alpha) + alpha * mean;
      CHECK(out["rank"][r]["m"][i].get<float>() == want);
    }
  }
  for (std::size_t i = 0; i < 4; ++i) {  // the line's mean is kept
    double before = 0, after = 0;
    for (int r = 0; r < P; ++r) before += model_of(r)[i], after += out["rank"][r]["m"][i].get<double>();
    CHECK(after == Approx(before).epsilon(1e-6));
  }
}

TEST_CASE("bidmach: a 2 x 2 grid converges on the quadratic, its messages counted", "[algorithms][bidmach]") {
  const auto out = dts::test::run_quadratic_ok(grid_run(4, 300, json::object()));
  const auto& c = out["counters"];
  CHECK(dts::test::distance_to_answer(out, grid_run(4, 300, json::object()).problem) < 0.05);
  const std::int64_t rows = c["rounds_row"], columns = c["rounds_column"];
  CHECK(rows >= 4 * 10);  // several rounds per line during 300 steps
  CHECK(columns >= 4 * 10);
  CHECK(c["rounds_forced_row"] == 0);
  CHECK(c["chunks_missing_row"] == 0);
  CHECK(c["chunks_short_reduced_column"] == 0);
  // Per node and round: one scatter chunk and one reduced chunk (lines of 2, blocks of 4 floats), the Start it
  // got and the Complete it sent; per node and dimension one Done and one Stop; then the final tree allreduce.
  CHECK(out["messages"] == 4 * (rows + columns) + 2 * 4 * 2 + 6);
}

TEST_CASE("bidmach: with quorums below 1 a slowed node's lines go on without it", "[algorithms][bidmach]") {
  // 4 x 4 grid; node 5 (no LineMaster) computes 20x slower, its share of every round too. Quorums of 3 of 4.
  const auto slowed = [](json config) {
    AlgoRun run = grid_run(16, 60, std::move(config));
    run.problem.dim = 16;
    run.problem.slowdown = {1, 1, 1, 1, 1, 20};
    run.problem.update_time_s = 0.5e-3;
    run.problem.slow_updates = true;
    return run;
  };
  const auto a = dts::test::run_quadratic_ok(slowed(json::object()));
  const auto b =
      dts::test::run_quadratic_ok(slowed({{"quorum_reduce", 0.75}, {"quorum_complete", 0.75}, {"quorum_round", 0.75}}));
  const auto& ca = a["counters"];
  const auto& cb = b["counters"];
  // Every line waits for node 0 with full quorums: nothing is short, nothing missing, nothing forced.
  CHECK(ca["chunks_short_reduced_row"] == 0);
  CHECK(ca["chunks_missing_row"] == 0);
  CHECK(ca["rounds_forced_row"].get<int>() + ca["rounds_forced_column"].get<int>() == 0);
  // With quorums node 5's row and column run more rounds, without its contributions (short reductions, chunks
  // from the members' own copies), and node 5 lags until its rounds are forced.
  CHECK(cb["rounds_row"].get<int>() > ca["rounds_row"].get<int>());
  CHECK(cb["chunks_short_reduced_row"].get<int>() > 0);
  CHECK(cb["chunks_missing_row"].get<int>() + cb["chunks_missing_column"].get<int>() > 0);
  CHECK(cb["rounds_forced_row"].get<int>() + cb["rounds_forced_column"].get<int>() > 0);
  CHECK(dts::test::distance_to_answer(b, slowed(json::object()).problem) < 0.2);
}

TEST_CASE("bidmach: nodes join and leave during rounds; no contribution is lost or counted twice",
          "[algorithms][bidmach]") {
  // 6 nodes start as a 3 x 3 grid of 5 (node 5 joins at 10 ms); nodes 2, 4 and then the joiner leave while the
  // learners train (60 steps of 1 ms) and rounds of 8 chunks per block are in flight. Every model starts at the
  // same point and the learners do not move it (lr 0), so every mean, full, short, forced or completed from a
  // node's own copy, must give that point back: a contribution lost from a sum but counted, or added twice, would
  // move it by a third of itself or more.
  const auto dynamic = [](json config) {
    AlgoRun run = grid_run(6, 60, std::move(config));
    run.config["chunk_floats"] = 4;
    run.problem.dim = 64;
    run.problem.lr = 0;
    run.problem.same_target = true;
    run.problem.init_at_target = true;
    run.joins = {{5, 0.010}};
    run.leaves = {{2, 0.020}, {4, 0.030}, {5, 0.045}};
    return run;
  };
  for (const double quorum : {1.0, 0.5}) {
    INFO("quorums " << quorum);
    const auto out = dts::test::run_quadratic_ok(dynamic({{"quorum_reduce", quorum}, {"quorum_complete", quorum}}));
    const auto& c = out["counters"];
    CHECK(c["grid_relayouts"] == 4);
    CHECK(c["grid_imbalance_max"] == 1);
    // Full quorums: rounds in flight were forced by the new versions of their lines. Half: members went on
    // without the others' contributions, and took chunks from their own copies.
    if (quorum == 1.0) {
      CHECK(c["rounds_forced_relayout_row"].get<int>() + c["rounds_forced_relayout_column"].get<int>() > 0);
    } else {
      CHECK(c["chunks_short_reduced_row"].get<int>() + c["chunks_short_reduced_column"].get<int>() > 0);
    }
    INFO(c.dump());
    CHECK(c["rounds_row"].get<int>() > 4 * 20);
    const auto& steps = out["steps"];
    CHECK(steps[0] == 60);
    CHECK(steps[2].get<int>() == 20);  // it stops at its first step at or after 20 ms
    CHECK(steps[4].get<int>() == 30);
    CHECK(steps[5].get<int>() > 0);
    CHECK(steps[5].get<int>() < 60);
    const std::vector<float> start = dynamic(json::object()).problem.target(0);
    const auto near = [&](const std::vector<float>& m) {
      for (std::size_t k = 0; k < start.size(); ++k) {
        if (std::abs(m[k] - start[k]) > 1e-5f * std::max(1.0f, std::abs(start[k]))) return false;
      }
      return true;
    };
    CHECK(near(out["final"].get<std::vector<float>>()));
    for (const auto& [rank, m] : out["observed"].items()) {
      INFO("rank " << rank);
      CHECK(near(m.get<std::vector<float>>()));
    }
  }
}

TEST_CASE("bidmach: a 2 x 2 x 2 grid (dims 3) averages along three dimensions and converges", "[algorithms][bidmach]") {
  AlgoRun run = grid_run(8, 300, {{"dims", 3}});
  const auto out = dts::test::run_quadratic_ok(run);
  const auto& c = out["counters"];
  // Lines of 2 mix less per round than the 8-node line (1e-7 after 300 steps) or the 3 x 3 grid (0.03): 0.062.
  CHECK(dts::test::distance_to_answer(out, run.problem) < 0.1);
  const std::int64_t rounds = c["rounds_row"].get<std::int64_t>() + c["rounds_column"].get<std::int64_t>() +
                              c["rounds_dim2"].get<std::int64_t>();
  for (const char* d : {"rounds_row", "rounds_column", "rounds_dim2"}) CHECK(c[d].get<int>() >= 8 * 10);
  // Lines of 2 in each dimension: per node and round a scatter chunk, a reduced chunk, the Start and the
  // Complete; per node and dimension a Done and a Stop; the final tree allreduce over 8.
  CHECK(out["messages"] == 4 * rounds + 2 * 8 * 3 + 14);
}

TEST_CASE("bidmach: the d-dimensional grid's lines", "[algorithms][bidmach]") {
  const auto lines = [](int n, int dims, int node, int dim) {
    return dts::bidmach::initial_grid(n, dims, {}).line(node, dim);
  };
  // 27 nodes in 3 x 3 x 3, row-major: node 13 is the centre (1, 1, 1).
  CHECK(lines(27, 3, 13, 0).members == std::vector<dts::Rank>{12, 13, 14});
  CHECK(lines(27, 3, 13, 1).members == std::vector<dts::Rank>{10, 13, 16});
  CHECK(lines(27, 3, 13, 2).members == std::vector<dts::Rank>{4, 13, 22});
  CHECK(lines(27, 3, 13, 2).master == 4);
  // 10 nodes: side 3, the last slab holds node 9 alone (its third-dimension line is 0 and 9).
  CHECK(lines(10, 3, 9, 2).members == std::vector<dts::Rank>{0, 9});
  CHECK(lines(10, 3, 9, 0).members.empty());  // alone in its row: no line
  CHECK(lines(16, 4, 5, 3).members == std::vector<dts::Rank>{5, 13});
}

TEST_CASE("bidmach: the communicator's copies of the model between GPU and host hold up the learner",
          "[algorithms][bidmach]") {
  /* In details:
   *   o a 2 x 2 grid, 1e6 floats (4 MB), 10 ms steps, 60 steps; host_copy_Bps 4e9: a round's fetch copies the
   *     model to the host (1 ms), its elastic step reads it back and writes it back (2 ms), under the model
   *     lock that the learner takes for each step
   * Expectations
   *   o host_copy_us = 3 ms per round (both counted per node and summed), none without the key
   *   o the learners finish later than without the copies, by no more than the copies' sum per node
   */
  auto plain = grid_run(4, 60, json::object());
  plain.problem.dim = 1'000'000;
  plain.problem.step_time_s = 10e-3;
  auto copying = plain;
  copying.config["host_copy_Bps"] = 4e9;
  const auto a = dts::test::run_quadratic_ok(plain);
  const auto b = dts::test::run_quadratic_ok(copying);
  const auto& c = b["counters"];
  CHECK_FALSE(a["counters"].contains("host_copy_us_row"));
  for (const char* d : {"row", "column"}) {
    INFO(d);
    CHECK(c[std::string("host_copy_us_") + d].get<double>() ==
          Approx(3000.0 * c[std::string("rounds_") + d].get<double>()).epsilon(1e-6));
  }
  double slowest_a = 0, slowest_b = 0;
  for (const auto& t : a["last_step_s"]) slowest_a = std::max(slowest_a, t.get<double>());
  for (const auto& t : b["last_step_s"]) slowest_b = std::max(slowest_b, t.get<double>());
  CHECK(slowest_b > slowest_a);
  const double copies_per_node =
      (c["host_copy_us_row"].get<double>() + c["host_copy_us_column"].get<double>()) / 4 / 1e6;
  CHECK(slowest_b <= slowest_a + copies_per_node + 1e-9);
}
