// MPCA SGD's recovery (papers/mpca_sgd.md §4.9): the driver's periodic backups of the joint model, and a run that
// loses a worker and finishes with the others (the tree reduce and the swarm broadcast rebuilt over them).
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "tests/algorithms/algo_harness.hpp"

namespace {

dts::test::AlgoRun mpca_run(int K, std::int64_t steps, nlohmann::json config = nlohmann::json::object()) {
  return dts::test::master_worker_run("mpca", K, steps, std::move(config));
}

}  // namespace

TEST_CASE("mpca recovery: a run that loses a worker finishes with the others, on the survivors' optimum",
          "[algorithms][mpca]") {
  const auto [phases, shards] = GENERATE(table<int, int>({{3, 3}, {2, 2}, {1, 1}}));
  const bool weighted = GENERATE(true, false);
  INFO(phases << "-phase, " << shards << " shards" << (weighted ? "" : ", unweighted"));
  auto run = mpca_run(4, 600, {{"phases", phases}, {"shards", shards}, {"weighted", weighted}});
  run.problem.same_target = true;  // every worker's optimum is the answer, the lost one's included
  const auto whole = dts::test::run_quadratic_ok(run);
  // Rank 1 is an inner node of the tree (ranks 3 and 4 send it their shares) and passes chunks on in the swarm.
  run.failures = {{1, whole["end_s"].get<double>() / 3}};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  CHECK(out["final_rank"] == 0);
  CHECK(out["final_step"] == run.steps);
  for (const int r : {2, 3, 4}) CHECK(out["steps"][r] == run.steps);
  // The lost worker stopped taking part (on the simulator its training loop, which makes no call into the world
  // until its last step, runs on in the dark: its step count says nothing).
  CHECK(out["bytes_sent"][1].get<double>() < out["bytes_sent"][2].get<double>() / 2);
  CHECK(out["counters"]["mpca_workers_lost"] == 1);
  CHECK(out["counters"]["mpca_phase_overlaps"] == 0);
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca recovery: two workers lost at different times, the last two finish", "[algorithms][mpca]") {
  auto run = mpca_run(4, 600);
  run.problem.same_target = true;
  const auto whole = dts::test::run_quadratic_ok(run);
  const double end = whole["end_s"].get<double>();
  run.failures = {{1, end / 4}, {3, end / 2}};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  for (const int r : {2, 4}) CHECK(out["steps"][r] == run.steps);
  CHECK(out["counters"]["mpca_workers_lost"] == 2);
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca recovery: the survivors take over the lost workers' data, each row once", "[algorithms][mpca]") {
  // Workers 0..3 on ranks 1..4, 6 rows each, 2 per step. Rank 1 is lost, then rank 3: the survivors (ranks 2 and
  // 4 at the end) read their own rows and, from their next pass on, the rows of the lost ones, split in rank order.
  auto run = mpca_run(4, 300);
  run.problem.same_target = true;
  run.problem.shard_rows = 6;
  const auto whole = dts::test::run_quadratic_ok(run);
  const double end = whole["end_s"].get<double>();
  run.failures = {{1, end / 4}, {3, end / 2}};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  CHECK(out["counters"]["mpca_samples_taken_over"] == 12);  // both lost shards, nothing twice
  const auto used = [&](int worker) {
    const auto rows = out["rows_used"][worker].get<std::vector<std::uint32_t>>();
    return std::set<std::uint32_t>(rows.begin(), rows.end());
  };
  // After the first loss ranks 2, 3, 4 take rows 0-1, 2-3, 4-5 of worker 0; after the second, ranks 2 and 4
  // take rows 0-2 and 3-5 of workers 0 and 2 (12-14 and 15-17).
  const std::set<std::uint32_t> r2 = used(1), r4 = used(3);
  for (const std::uint32_t row : {0u, 1u, 2u, 12u, 13u, 14u}) CHECK(r2.count(row) == 1);
  for (const std::uint32_t row : {4u, 5u, 3u, 15u, 16u, 17u}) CHECK(r4.count(row) == 1);
  CHECK(used(2).count(2) == 1);  // rank 3 took its part before it was lost too
  CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-4);
}

TEST_CASE("mpca recovery: the driver backs x~ up every checkpoint_every cycles, in the background",
          "[algorithms][mpca]") {
  auto run = mpca_run(3, 300);
  const auto off = dts::test::run_quadratic_ok(run);
  CHECK_FALSE(off["counters"].contains("mpca_checkpoints"));
  run.config["checkpoint_every"] = 4;
  run.config["checkpoint_s"] = 0.0;  // a write far shorter than a cycle: none skipped
  const auto on = dts::test::run_quadratic_ok(run);
  INFO(on.dump());
  const int cycles = on["counters"]["mpca_cycles"].get<int>();
  CHECK(on["counters"]["mpca_checkpoints"] == cycles / 4);
  CHECK(on["counters"]["mpca_checkpoints_skipped"] == 0);
  // A write as long as 10 cycles: a due backup while one is written is skipped.
  const double cycle_s = off["end_s"].get<double>() / off["counters"]["mpca_cycles"].get<double>();
  run.config["checkpoint_s"] = 10 * cycle_s;
  const auto slow = dts::test::run_quadratic_ok(run);
  INFO(slow.dump());
  const int written = slow["counters"]["mpca_checkpoints"].get<int>(),
            skipped = slow["counters"]["mpca_checkpoints_skipped"].get<int>();
  CHECK(written > 0);
  CHECK(skipped > written);
  CHECK(written + skipped == slow["counters"]["mpca_cycles"].get<int>() / 4);
}

TEST_CASE(
    "mpca recovery: a lost driver restarts from its last backup, and the run ends within the spread of "
    "unfaulted runs",
    "[algorithms][mpca]") {
  const int K = 4;
  const std::int64_t steps = 600;
  const nlohmann::json config = {{"checkpoint_every", 6}, {"checkpoint_s", 0.0}};
  // The run-to-run spread: unfaulted runs over a few seeds (each its own optimum and path).
  double worst = 0;
  double end_s = 0;
  for (const std::uint64_t seed : {3, 5, 9}) {
    auto run = mpca_run(K, steps, config);
    run.problem.seed = seed;
    const auto out = dts::test::run_quadratic_ok(run);
    worst = std::max(worst, dts::test::distance_to_answer(out, run.problem));
    end_s = out["end_s"].get<double>();
  }
  auto run = mpca_run(K, steps, config);
  run.problem.seed = 7;
  const double crash_s = end_s / 3, down_s = end_s / 20;
  run.restarts = {{0, crash_s, down_s}};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  CHECK(out["final_rank"] == 0);
  for (int r = 1; r <= K; ++r) CHECK(out["steps"][r] == steps);
  CHECK(out["counters"]["mpca_driver_restarts"] == 1);
  CHECK(out["counters"]["mpca_restores"] == K);
  // It resumed from the last backup written before the crash.
  double last_backup_cycle = -1, restart_cycle = -2;
  for (const auto& e : out["events"]) {
    if (e["event"] == "checkpoint" && e["at_s"].get<double>() <= crash_s) last_backup_cycle = e["cycle"].get<double>();
    if (e["event"] == "driver_restart") {
      restart_cycle = e["backup_cycle"].get<double>();
      CHECK(e["crash_s"].get<double>() == crash_s);
      CHECK(e["down_s"].get<double>() >= down_s);
      CHECK(e["cycles_lost"].get<double>() > 0);
      CHECK(e["time_lost_s"].get<double>() > e["down_s"].get<double>());  // the work since the backup too
    }
  }
  CHECK(last_backup_cycle > 0);
  CHECK(restart_cycle == last_backup_cycle);
  INFO("unfaulted runs end within " << worst << " of their optimum");
  CHECK(dts::test::distance_to_answer(out, run.problem) <= worst);
}

TEST_CASE("mpca recovery: a driver lost before its first backup restarts from the initial model",
          "[algorithms][mpca]") {
  auto run = mpca_run(3, 300);  // no backups
  const auto whole = dts::test::run_quadratic_ok(run);
  run.restarts = {{0, whole["end_s"].get<double>() / 4, 0.01}};
  const auto out = dts::test::run_quadratic_ok(run);
  INFO(out.dump());
  REQUIRE(out["events"].size() == 1);
  const auto& e = out["events"][0];
  CHECK(e["event"] == "driver_restart");
  CHECK(e["backup_cycle"] == 0);
  CHECK(e["time_lost_s"].get<double>() == Approx(e["at_s"].get<double>()));  // everything since the start
  CHECK(e["cycles_lost"].get<double>() > 0);                                 // every cycle before the crash
  CHECK(e["down_s"].get<double>() >= 0.01);
}
