// MPCA SGD (algorithms/mpca) on the quadratic problem, and its pure parts: the pipeline's schedule (no shard in
// two phases at once), the driver's extrapolation (gamma = 0 broadcasts the joint model itself), the beta and
// alpha schedules. At the fixed point of Eq. 7 with every target the joint model, sum_i (x_i - x~) = 0 makes the
// workers' gradients sum to zero: the joint model is the mean of the c_i.
#include <catch2/catch.hpp>
#include <set>

#include "algorithms/mpca/pipeline.hpp"
#include "algorithms/mpca/shard_layout.hpp"
#include "algorithms/mpca/update_rules.hpp"
#include "tests/algorithms/algo_harness.hpp"

using dts::mpca::Cycle;
using dts::mpca::cycle_of;

TEST_CASE("mpca pipeline: with S shards in the 3-phase pattern no shard is in two phases at once",
          "[algorithms][mpca]") {
  const int S = GENERATE(3, 4, 7);
  std::vector<std::vector<int>> history(static_cast<std::size_t>(S));  // per shard: the phases it went through
  for (std::int64_t c = 0; c < 10 * S; ++c) {
    const Cycle cy = cycle_of(3, S, c);
    INFO("cycle " << c);
    CHECK(cy.order == Cycle::Order::kAtOnce);
    std::set<int> busy;
    for (const int s : {cy.reduce, cy.prepare, cy.broadcast}) {
      if (s < 0) continue;
      CHECK(busy.insert(s).second);  // in one phase only
    }
    CHECK(cy.reduce == c % S);
    if (c >= 2) {  // reduce -> prepare -> broadcast, one cycle each
      CHECK(cy.prepare == (c - 1) % S);
      CHECK(cy.broadcast == (c - 2) % S);
    }
  }
  // The 2-phase pattern prepares before the reduce starts, then broadcasts what it prepared while reducing another.
  for (std::int64_t c = 1; c < 20; ++c) {
    const Cycle cy = cycle_of(2, 2, c);
    CHECK(cy.order == Cycle::Order::kPrepareFirst);
    CHECK(cy.broadcast == cy.prepare);
    CHECK(cy.reduce != cy.broadcast);
  }
  CHECK(cycle_of(1, 1, 5).order == Cycle::Order::kInTurn);
}

TEST_CASE("mpca extrapolation: gamma = 0 broadcasts the plain joint model", "[algorithms][mpca]") {
  std::vector<float> joint = {1.0f, -2.5f, 3.25f}, old = {0.5f, 0.0f, 0.1f}, red = {0.3f, 7.0f, -1.0f};
  std::vector<float> v = {0.2f, -0.1f, 0.7f}, xstar(3, 0.0f);
  const auto sl = [](std::vector<float>& x) { return dts::Slice(std::span<float>(x)); };
  dts::mpca::driver_update(sl(joint), sl(old), sl(red), 0.9f);
  CHECK(old == std::vector<float>{1.0f, -2.5f, 3.25f});
  CHECK(joint[1] == Approx(0.1 * -2.5 + 0.9 * 7.0));
  dts::mpca::extrapolate(sl(xstar), sl(v), sl(joint), sl(old), 0.8f, 0.0f);
  CHECK(xstar == joint);  // bit for bit
  CHECK(v[1] == Approx(0.8 * -0.1 + 0.2 * (joint[1] - old[1])));
  dts::mpca::extrapolate(sl(xstar), sl(v), sl(joint), sl(old), 0.8f, 0.7f);  // a look-ahead moves it
  CHECK(xstar != joint);
  CHECK(xstar[0] == Approx(joint[0] + 0.7 * v[0]));
}

TEST_CASE("mpca schedules: beta from 1 to its floor over the ramp, alpha 0, high, decaying", "[algorithms][mpca]") {
  dts::mpca::Schedules s;  // the defaults of §4.5 and §4.7 with S = 3
  CHECK(s.beta_at(0) == 1.0);
  CHECK(s.beta_at(10) == Approx(std::pow(0.9, 0.5)));
  CHECK(s.beta_at(20) == Approx(0.9));
  CHECK(s.beta_at(500) == 0.9);
  CHECK(s.alpha_at(8) == 0);     // 3 rounds of 3 cycles
  CHECK(s.alpha_at(9) == 0.5);   // then 1 round high
  CHECK(s.alpha_at(12) == 0.5);  // decay starts
  CHECK(s.alpha_at(13) < 0.5);
  CHECK(s.alpha_at(27) == 0.05);  // after 5 rounds of decay
  CHECK(s.alpha_at(1000) == 0.05);
  s.gamma_ramp_cycles = 10;
  CHECK(s.gamma_at(5) == Approx(0.35));
  CHECK(s.gamma_at(50) == Approx(0.7));
}

namespace {
dts::test::AlgoRun mpca_run(int K, std::int64_t steps, nlohmann::json config = nlohmann::json::object()) {
  return dts::test::master_worker_run("mpca", K, steps, std::move(config));
}
}  // namespace

TEST_CASE("mpca: the joint model converges on the quadratic, every pattern", "[algorithms][mpca]") {
  const auto [phases, shards] = GENERATE(table<int, int>({{3, 3}, {3, 4}, {2, 2}, {1, 1}, {1, 3}}));
  const bool weighted = GENERATE(true, false);
  INFO(phases << "-phase, " << shards << " shards" << (weighted ? "" : ", unweighted"));
  auto run = mpca_run(4, 600, {{"phases", phases}, {"shards", shards}, {"weighted", weighted}});
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  CHECK(out["final_rank"] == 0);  // the driver's joint model
  CHECK(out["final_step"] == run.steps);
  for (int r = 1; r <= 4; ++r) CHECK(out["steps"][r] == run.steps);
  CHECK(out["counters"]["mpca_phase_overlaps"] == 0);
  CHECK(out["counters"]["mpca_cycles"].get<int>() > 3 * 9);  // past the alpha warm-up
  CHECK(out["counters"]["mpca_targets_set"].get<int>() > 0);
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca: Eq. 6, the penalty as a gradient, converges too", "[algorithms][mpca]") {
  auto run = mpca_run(3, 600, {{"penalty", "gradient"}, {"gamma", 0.0}});
  const auto out = dts::test::run_quadratic_ok(run);
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca: the weighted reduce weighs each worker by its steps, so one that has stopped weighs nothing",
          "[algorithms][mpca]") {
  // Worker 0 steps 8x slower. Every worker starts at its own optimum c_i and no pull applies (alpha 0 throughout),
  // so each stays there, and with beta 1 the joint model is the reduce's last average of the c_i. Long after the
  // others have taken their last step only the straggler still steps: Eq. 9 gives it all the weight, the plain
  // mean a third.
  auto run = mpca_run(3, 400, {{"alpha", 0.0}, {"alpha_high", 0.0}, {"gamma", 0.0}, {"beta", 1.0}});
  run.problem.slowdown = {8.0};
  run.problem.init_at_target = true;
  const auto weighted = dts::test::run_quadratic_ok(run);
  run.config["weighted"] = false;
  const auto plain = dts::test::run_quadratic_ok(run);
  const auto c0 = run.problem.target(0);
  const auto mean = run.problem.mean_target();
  for (std::size_t k = 0; k < c0.size(); ++k) {
    INFO("coordinate " << k);
    CHECK(plain["final"][k].get<double>() == Approx(mean[k]).margin(1e-6));
    CHECK(weighted["final"][k].get<double>() == Approx(c0[k]).margin(1e-6));
  }
}

TEST_CASE("mpca: phases need as many shards, a refusal naming the key", "[algorithms][mpca]") {
  const auto out = dts::test::run_quadratic(mpca_run(2, 10, {{"phases", 3}, {"shards", 2}}));
  REQUIRE(out.contains("error"));
  CHECK(out["error"].get<std::string>().find("phases") != std::string::npos);
}

TEST_CASE("mpca: shard_split largest_layer, the largest layer and the rest (two ranges), converges",
          "[algorithms][mpca]") {
  // Layers of 2, 6 and 2 floats: shard 0 is the middle layer, shard 1 the first and the last, sent packed.
  auto run = mpca_run(4, 600, {{"phases", 2}, {"shards", 2}, {"shard_split", "largest_layer"}});
  run.problem.dim = 10;
  run.problem.blocks = 3;
  run.problem.block_sizes = {2, 6, 2};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  CHECK(out["counters"]["mpca_phase_overlaps"] == 0);
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca ShardLayout: even ranges, or the largest layer and the rest, packed in the vector's order",
          "[algorithms][mpca]") {
  using dts::mpca::ShardLayout;
  using dts::mpca::Split;
  using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;
  const std::vector<dts::model::ParamBlock> blocks = {{"conv.weight", 0, 9},  {"conv.bias", 9, 1},
                                                      {"fc1.weight", 10, 50}, {"fc1.bias", 60, 5},
                                                      {"fc2.weight", 65, 6},  {"fc2.bias", 71, 1}};
  const ShardLayout even(Split::kEven, 3, 72, blocks);
  CHECK(even.ranges(0) == Ranges{{0, 24}});
  CHECK(even.ranges(2) == Ranges{{48, 24}});
  const ShardLayout layered(Split::kLargestLayer, 2, 72, blocks);
  CHECK(layered.ranges(0) == Ranges{{10, 55}});  // fc1, weights and bias
  CHECK(layered.ranges(1) == Ranges{{0, 10}, {65, 7}});
  CHECK(layered.size(1) == 17);
  CHECK(layered.largest() == 55);
  dts::Vec model(72, true), packed(17, true), back(72, true);
  for (std::size_t i = 0; i < 72; ++i) model.data()[i] = static_cast<float>(i);
  layered.gather(model, 1, packed);
  CHECK(packed.data()[9] == 9);
  CHECK(packed.data()[10] == 65);
  CHECK(packed.data()[16] == 71);
  layered.scatter(packed, 1, back);
  for (std::size_t i = 0; i < 72; ++i) CHECK(back.data()[i] == ((i >= 10 && i < 65) ? 0.0f : static_cast<float>(i)));
}

TEST_CASE("mpca: shard_split largest_layer makes two shards, a refusal naming the key", "[algorithms][mpca]") {
  const auto three = dts::test::run_quadratic(mpca_run(2, 10, {{"shards", 3}, {"shard_split", "largest_layer"}}));
  REQUIRE(three.contains("error"));
  CHECK(three["error"].get<std::string>().find("/algorithm/shard_split") != std::string::npos);
  // The quadratic of one block is a model of one layer: nothing to split at.
  const auto one =
      dts::test::run_quadratic(mpca_run(2, 10, {{"shards", 2}, {"phases", 2}, {"shard_split", "largest_layer"}}));
  REQUIRE(one.contains("error"));
  CHECK(one["error"].get<std::string>().find("two layers") != std::string::npos);
}

TEST_CASE("mpca: the driver evaluates x~ at every step due that its reductions reach", "[algorithms][mpca]") {
  auto run = mpca_run(4, 600);  // the workers' count advances by one step per reduction here
  const auto out = dts::test::run_quadratic_ok(run);
  const auto steps = out["eval_steps"].get<std::vector<std::int64_t>>();
  INFO(out["eval_steps"].dump());
  REQUIRE(steps.back() == run.steps);  // the final model
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    CHECK(steps[i] % 10 == 0);  // the harness's evaluation steps
    CHECK(steps[i] < steps[i + 1]);
  }
  CHECK(static_cast<std::int64_t>(steps.size()) == 1 + run.steps / 10);  // steps 0 ... 590, the final: none skipped
}
