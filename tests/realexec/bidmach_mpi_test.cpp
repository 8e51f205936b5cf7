// BIDMach's grid (issue 17) on MPI against the simulator, from the same experiment file: the rounds alone
// (no learner) run the same protocol on both backends, round for round and message for message; with learners
// the interleaving of training and averaging is real, so the run is only required to train.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::mpirun_dtsim;
using dts::test::summary_of;
using dts::test::write_json;

TEST_CASE("realexec: bidmach_grid runs the simulator's rounds on MPI, and trains", "[mpi]") {
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["algorithm"] = {{"name", "bidmach_grid"},
                      {"workers", 4},
                      {"batch_size", 16},
                      {"startup_poll_s", 0},
                      {"optimizer", {{"kind", "sgd"}, {"lr", 0.1}}}};
  exp["run"] = {{"steps", 32}, {"eval_every_steps", 16}, {"log_every_steps", 8}};
  // logreg on 6 x 6 inputs: 370 floats, blocks of 185 in lines of 2, chunks of 40: 5 per block.
  exp["variants"] = {{{"name", "rounds"}, {"algorithm", {{"train", false}, {"max_rounds", 5}, {"chunk_floats", 40}}}},
                     {{"name", "train"}}};
  write_json(tmp / "grid.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "grid.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "grid.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  const auto s = summary_of(tmp / "sim" / "rounds"), m = summary_of(tmp / "mpi" / "rounds");
  for (const char* dim : {"row", "column"}) {
    INFO(dim);
    CHECK(s["counters"][std::string("rounds_") + dim] == 4 * 5);  // every node completes the 5 rounds of each line
    CHECK(m["counters"][std::string("rounds_") + dim] == 4 * 5);
    CHECK(m["counters"][std::string("chunks_missing_") + dim] == 0);
  }
  CHECK(m["messages"] == s["messages"]);
  CHECK(m["bytes_sent_per_rank"] == s["bytes_sent_per_rank"]);
  for (const char* backend : {"sim", "mpi"}) {
    INFO(backend);
    const auto t = summary_of(tmp / backend / "train");
    CHECK(t["test_accuracy"].get<double>() > 0.5);
    CHECK(t["counters"]["rounds_row"].get<int>() > 0);
  }
}

namespace {

// 5 nodes of the grid, 16 steps, with a joining and a leaving rank (joins at join_at_s; rank 2 leaves at once).
nlohmann::json membership_experiment(double join_at_s) {
  auto exp = dts::test::tiny_experiment();
  exp["algorithm"] = {{"name", "bidmach_grid"},
                      {"workers", 5},
                      {"batch_size", 16},
                      {"startup_poll_s", 0},
                      {"optimizer", {{"kind", "sgd"}, {"lr", 0.1}}}};
  exp["run"] = {{"steps", 16}, {"eval_every_steps", 0}, {"log_every_steps", 8}};
  exp.erase("variants");
  exp["scenario"] = {{"joins", {{{"rank", 4}, {"at_s", join_at_s}}}}, {"leaves", {{{"rank", 2}, {"at_s", 0}}}}};
  return exp;
}

}  // namespace

TEST_CASE("realexec: bidmach_grid's membership changes on MPI as on the simulator", "[mpi]") {
  TempDir tmp;
  // Rank 4 starts 20 ms late and joins the grid of 4; rank 2 leaves at its first step.
  const auto exp = membership_experiment(0.02);
  write_json(tmp / "grid.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "grid.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(5, (tmp / "grid.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const char* backend : {"sim", "mpi"}) {
    INFO(backend);
    const auto s = summary_of(tmp / backend);
    CHECK(s["counters"]["grid_relayouts"] == 2);
    CHECK(s["counters"]["grid_imbalance_max"] == 1);
    CHECK(s["test_accuracy"].get<double>() > 0.5);
    CHECK(s["scenario"]["events"].size() == 2);
  }
}

TEST_CASE("realexec: bidmach_grid waits between rounds past the hang timeout", "[mpi]") {
  TempDir tmp;
  // Rank 2 leaves at once and the others finish their steps in a fraction of a second; rank 4 joins at 3 s.
  // Until then the GridMaster hears nothing, the leaver waits for the final members and the lines wait for
  // their next round: each longer than the 1 s hang timeout, as between the rounds of a long run.
  write_json(tmp / "grid.json", membership_experiment(3));
  const auto mpi = mpirun_dtsim(
      5, (tmp / "grid.json").string() + " --out " + (tmp / "mpi").string() + " --hang-timeout 1", tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  const auto s = summary_of(tmp / "mpi");
  CHECK(s["counters"]["grid_relayouts"] == 2);
  CHECK(s["wall_time_s"].get<double>() > 3);
}
