// `dtsim run --backend mpi` end to end, launched under mpirun as a user would: allreduce SGD trains the same
// model as the simulator, bit for bit; asynchronous EASGD runs to the end and learns; a job of the wrong size
// and modeled numerics are input errors; a rank that throws, dies or hangs ends the job, leaving no result
// directory, and a hang is reported naming the rank that hung; DTS_MPI_FAULT reaches every rank of the job.
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <tuple>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::mpirun;
using dts::test::mpirun_dtsim;
using dts::test::rows_without_time;
using dts::test::slurp;
using dts::test::summary_of;
using dts::test::write_json;

namespace {

// tiny_experiment() without its variants: allreduce_sgd, 4 workers.
fs::path write_tiny(const TempDir& tmp) {
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  return tmp / "tiny.json";
}

// The steps column of ranks.csv, by rank.
std::vector<std::string> steps_per_rank(const fs::path& dir) {
  std::istringstream in(slurp(dir / "ranks.csv"));
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "rank,steps,idle_s,waited_s");
  std::vector<std::string> steps;
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1);
    steps.push_back(line.substr(a + 1, b - a - 1));
  }
  return steps;
}

bool leaves_nothing(const TempDir& tmp, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(tmp / "")) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("realexec: allreduce_sgd on MPI ends with the simulator's model, bit for bit", "[mpi]") {
  /* Same Trainer (kernels, shard, minibatch order, optimizer), same ring, tree or hypercube reduction order, the same
   * seed: the final parameters, every loss and every evaluation must be identical; so are the message and
   * byte counts, since the simulator's modeled bytes default to the real ones. Both variants run one after
   * the other in one MPI job. */
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["variants"] = {{{"name", "ring"}},
                     {{"name", "tree"}, {"algorithm", {{"allreduce", "tree"}}}},
                     {{"name", "hypercube"}, {"algorithm", {{"allreduce", "hypercube"}}}}};
  write_json(tmp / "tiny.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "tiny.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "tiny.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"ring", "tree", "hypercube"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(m["backend"] == "mpi");
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(m["test_accuracy"] == s["test_accuracy"]);
    REQUIRE(m["test_loss"] == s["test_loss"]);
    REQUIRE(m["messages"] == s["messages"]);
    REQUIRE(m["bytes_sent_per_rank"] == s["bytes_sent_per_rank"]);
    REQUIRE(m["bytes_received_per_rank"] == s["bytes_received_per_rank"]);
    REQUIRE(m["wall_time_s"].get<double>() > 0);
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
    REQUIRE_THAT(slurp(tmp / "mpi" / variant / "metrics.csv"), Catch::Contains(",eval,wall,\n"));
    // ranks.csv: the same steps per rank (64 = 2 epochs of 32) on both backends; waits charged to ranks of the job.
    REQUIRE(steps_per_rank(tmp / "mpi" / variant) == std::vector<std::string>(4, "64"));
    REQUIRE(steps_per_rank(tmp / "sim" / variant) == std::vector<std::string>(4, "64"));
    std::istringstream waits(slurp(tmp / "mpi" / variant / "waits.csv"));
    std::string line;
    REQUIRE((std::getline(waits, line) && line == "rank,peer,waited_s"));
    int rows = 0;
    for (; std::getline(waits, line); ++rows) {
      const int rank = line[0] - '0', peer = line[2] - '0';
      REQUIRE((line[1] == ',' && line[3] == ',' && rank != peer && peer >= 0 && peer < 4));
    }
    REQUIRE(rows > 0);
  }
}

TEST_CASE("realexec: synchronous EASGD and sync SGD on MPI end with the simulator's model", "[mpi]") {
  // Deterministic algorithms (papers/easgd_hpc.md §5.4: "deterministic and reproducible"): tree broadcast and
  // reduce in a fixed order, the same Trainer, so the same bits on both backends. Variant 3 overlaps its
  // collectives with forward/backward through a spawned activity (a thread on MPI).
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["algorithm"]["name"] = "easgd_sync";
  exp["variants"] = {{{"name", "easgd_sync1"}, {"algorithm", {{"variant", 1}}}},
                     {{"name", "easgd_sync3"}, {"algorithm", {{"variant", 3}}}},
                     {{"name", "sync_sgd"}, {"algorithm", {{"name", "sync_sgd"}}}}};
  write_json(tmp / "sync.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "sync.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(5, (tmp / "sync.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"easgd_sync1", "easgd_sync3", "sync_sgd"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(s["test_accuracy"].get<double>() > 0.9);
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
}

TEST_CASE("realexec: asynchronous EASGD runs on MPI to the end and learns", "[mpi]") {
  // Not comparable bit for bit: the center serves workers in the order their messages happen to arrive.
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto r =
      mpirun_dtsim(5, exp.string() + " --set algorithm.name=easgd_async --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto s = summary_of(tmp / "out");
  INFO(s.dump());
  REQUIRE(s["test_accuracy"].get<double>() > 0.9);
  REQUIRE(s["ranks"] == 5);
  REQUIRE(s["bytes_sent_per_rank"].size() == 5);
  const auto rows = rows_without_time(tmp / "out");
  for (int rank = 1; rank <= 4; ++rank) {  // every worker logged its last step (64 = 2 epochs of 32)
    INFO("rank " << rank);
    REQUIRE(std::any_of(rows.begin(), rows.end(),
                        [&](const std::string& row) { return row.rfind(std::to_string(rank) + ",64,", 0) == 0; }));
  }
  const auto resolved = nlohmann::json::parse(slurp(tmp / "out" / "config.resolved.json"));
  REQUIRE(resolved["backend"] == "mpi");
  REQUIRE_THAT(resolved["versions"]["mpi"].get<std::string>(), Catch::Contains("MPI"));
}

TEST_CASE("realexec: a job of the wrong size, or modeled numerics, is an input error and writes nothing", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  auto r = mpirun_dtsim(
      4, exp.string() + " --set algorithm.name=easgd_async --set algorithm.workers=8 --out " + (tmp / "out").string(),
      tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("tiny.json") && Catch::Contains("/algorithm/workers") &&
                          Catch::Contains("needs 9 MPI ranks") && Catch::Contains("has 4"));
  r = mpirun_dtsim(4, exp.string() + " --set model.numerics=modeled --out " + (tmp / "out").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/model/numerics"));
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: --backend mpi --check needs no mpirun and refuses what an MPI job would", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const std::string out = " --out " + (tmp / "out").string();
  const auto dtsim = [&](const std::string& args) {
    return dts::test::run_dtsim("run --backend mpi --check " + args, tmp / "");
  };
  auto r = dtsim(exp.string() + out + " --set algorithm.name=easgd_async");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(slurp(tmp / "stdout.txt"), Catch::Contains("ok, easgd_async, 4 workers, mpirun -np 5"));
  r = dtsim(exp.string() + out + " --cfg=network/model:CM02");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("--cfg=network/model:CM02") && Catch::Contains("not used with --backend mpi"));
  r = dtsim(exp.string() + out + " --set model.numerics=modeled");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/model/numerics"));
  r = dtsim(exp.string() + out + " --set run.trace=chrome");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/run/trace"));
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: an existing --out that holds no result is refused before anything runs", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  fs::create_directories(tmp / "mine");
  std::ofstream(tmp / "mine" / "notes.txt") << "a user's file\n";
  for (const char* force : {"", " --force"}) {
    const auto r = mpirun_dtsim(4, exp.string() + " --out " + (tmp / "mine").string() + force, tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Catch::Contains("--out") && Catch::Contains("exists"));
    REQUIRE(fs::exists(tmp / "mine" / "notes.txt"));
    REQUIRE(leaves_nothing(tmp, "mine."));
  }
}

TEST_CASE("realexec: a rank that throws or dies ends the job and leaves no result directory", "[mpi]") {
  /* DTS_MPI_FAULT makes rank 2 fail at its step 2, while the others wait for it inside the ring allreduce.
   *   throw: the rank boundary prints "rank 2: error" and calls MPI_Abort(1): mpirun exits 1.
   *   kill:  rank 2 dies by SIGKILL (a dead peer): Open MPI ends the job, mpirun exits non-zero. */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const std::string args = exp.string() + " --out " + (tmp / "out").string();
  auto r = mpirun_dtsim(4, args, tmp / "", "DTS_MPI_FAULT=2:throw");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("rank 2: error: injected fault"));
  REQUIRE(leaves_nothing(tmp, "out"));
  r = mpirun_dtsim(4, args, tmp / "", "DTS_MPI_FAULT=2:kill");
  REQUIRE(r.code != 0);
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: a rank that hangs ends the job after --hang-timeout, naming the rank it waited for", "[mpi]") {
  /* DTS_MPI_FAULT=2:hang: rank 2 sleeps at its step 2. Rank 3 waits for rank 2's part of the ring allreduce;
   * after 2 s with no progress it ends the job with an error that names rank 2. Rank 0, which waits for rank
   * 3's next part, starts waiting a ring step (microseconds) later: on a loaded machine its 2 s can run out
   * first, and its error names rank 3, the rank it waited for (seen once in a parallel ctest). */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = mpirun_dtsim(4, exp.string() + " --hang-timeout 2 --out " + (tmp / "out").string(), tmp / "",
                              "DTS_MPI_FAULT=2:hang");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("rank 3: error: waited 2 s for a message from rank 2 (tag") ||
                          Catch::Contains("rank 0: error: waited 2 s for a message from rank 3 (tag"));
  REQUIRE_THAT(r.err, Catch::Contains("with no progress"));
  REQUIRE(leaves_nothing(tmp, "out"));
  REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120));  // it did not wait for the sleeper
}

TEST_CASE("realexec: the center of asynchronous EASGD names the worker that hung", "[mpi]") {
  /* DTS_MPI_FAULT=2:hang: worker 2 sleeps at its step 2; workers 1, 3 and 4 run to the end. The center waits
   * for a message from any worker: after 2 s with no progress, it names the one worker that has neither
   * finished the plan nor sent anything since. The finished workers wait for the others twice as long, so
   * the center's error is the one that ends the job. */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = mpirun_dtsim(
      5, exp.string() + " --set algorithm.name=easgd_async --hang-timeout 2 --out " + (tmp / "out").string(), tmp / "",
      "DTS_MPI_FAULT=2:hang");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("rank 0: error: waited 2 s for any of 2 operations (with ranks 1-4) with no "
                                      "progress: rank 2 has hung or died, silent all that time"));
  REQUIRE_THAT(r.err, !Catch::Contains("to finish the plan"));
  REQUIRE(leaves_nothing(tmp, "out"));
  REQUIRE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
}

TEST_CASE("realexec: a fault aimed at the EASGD center fires at its 2nd message", "[mpi]") {
  /* Rank 0, the center, takes no training steps: DTS_MPI_FAULT fires when it sends its 2nd reply.
   *   throw: "rank 0: error: injected fault", mpirun exits 1.
   *   hang:  the workers wait for the center's reply, or for it to take their weights, and name rank 0. */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const std::string args =
      exp.string() + " --set algorithm.name=easgd_async --hang-timeout 2 --out " + (tmp / "out").string();
  auto r = mpirun_dtsim(5, args, tmp / "", "DTS_MPI_FAULT=0:throw");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("rank 0: error: injected fault"));
  REQUIRE(leaves_nothing(tmp, "out"));
  r = mpirun_dtsim(5, args, tmp / "", "DTS_MPI_FAULT=0:hang");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("a message from rank 0 (tag") || Catch::Contains("rank 0 to take a message"));
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: a fault aimed at a rank with nothing to do fires when its plan returns", "[mpi]") {
  /* easgd_sync variant 2: rank 0 (the host CPU) holds no parameters and returns at once; DTS_MPI_FAULT=0:hang
   * makes it sleep there. The workers train to the end, then wait for rank 0 to finish the plan: after twice
   * the hang timeout they end the job naming it. */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto r =
      mpirun_dtsim(5,
                   exp.string() + " --set algorithm.name=easgd_sync --set algorithm.variant=2 --hang-timeout 2 --out " +
                       (tmp / "out").string(),
                   tmp / "", "DTS_MPI_FAULT=0:hang");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("waited 4 s for rank 0 to finish the plan with no progress"));
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: DTS_MPI_FAULT naming no rank of the job is an input error", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const std::string args = exp.string() + " --out " + (tmp / "out").string();
  for (const auto& [fault, why] : std::vector<std::pair<std::string, std::string>>{
           {"4:throw", "rank 4 is not in this job of 4 ranks (0-3)"},
           {"-1:kill", "expected RANK:throw, RANK:kill or RANK:hang, RANK in 0-3"},
           {"x:hang", "expected RANK:throw"}}) {
    const auto r = mpirun_dtsim(4, args, tmp / "", "DTS_MPI_FAULT=" + fault);
    INFO(fault << ": " << r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Catch::Contains("input error: DTS_MPI_FAULT: ") && Catch::Contains(why));
    REQUIRE(leaves_nothing(tmp, "out"));
  }
}

TEST_CASE("realexec: dtsim bench allreduce times ring, tree, hypercube and MPI_Allreduce with exact sums, tiny sizes",
          "[mpi]") {
  /* 1 float on 2 ranks (an empty ring chunk), 3 floats (uneven chunks), 1 KB and 40,004 bytes; 2 repetitions
   * of a few calls each. The bench checks every element of every sum and exits 1 on a wrong one. */
  TempDir tmp;
  const auto r = mpirun(
      2, "bench allreduce --sizes 4,12,1024,40004 --algos ring,tree,hypercube,mpi --reps 2 --budget-s 0.01", tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string out = slurp(tmp / "stdout.txt");
  INFO(out);
  CHECK(out.find("ranks=2 reps=2") != std::string::npos);
  CHECK(out.find("RESULT-CHECK-FAILED") == std::string::npos);
  int rows = 0;
  std::istringstream in(out);
  for (std::string algo, line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::uint64_t bytes = 0;
    int iters = 0;
    double t_med_us = 0;
    if (!(fields >> algo >> bytes >> iters >> t_med_us)) continue;
    CHECK((algo == "ring" || algo == "tree" || algo == "hypercube" || algo == "mpi"));
    CHECK(iters >= 1);
    CHECK(t_med_us > 0);
    ++rows;
  }
  CHECK(rows == 16);
}

TEST_CASE("realexec: dtsim bench allreduce with a size that is not whole floats is an input error", "[mpi]") {
  TempDir tmp;
  const auto r = mpirun(2, "bench allreduce --sizes 4096,6", tmp / "");
  CHECK(r.code == 2);
  CHECK(r.err.find("--sizes: 6 bytes") != std::string::npos);
}

TEST_CASE("dtsim sweep under mpirun: each rank runs whole points, rank 0 writes the same table as one process",
          "[mpi]") {
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  write_json(tmp / "sweep.json", {{"experiment", "tiny.json"},
                                  {"set", {{"model.numerics", "modeled"}, {"data.modeled", true}}},
                                  {"grid", {{"platform.link_bandwidth_bps", {1e8, 1e9, 1e10}}, {"seed", {1, 2}}}}});
  const std::string sweep = (tmp / "sweep.json").string();
  const auto one = dts::test::run_dtsim("sweep " + sweep + " --out " + (tmp / "one").string(), tmp / "");
  INFO(one.err);
  REQUIRE(one.code == 0);
  const auto three = mpirun(3, "sweep " + sweep + " --out " + (tmp / "three").string(), tmp / "");
  INFO(three.err);
  REQUIRE(three.code == 0);
  REQUIRE(slurp(tmp / "three" / "table.csv") == slurp(tmp / "one" / "table.csv"));
  // As a Slurm array would: two shards, then --collate.
  for (const char* shard : {"0/2", "1/2"}) {
    const auto r =
        dts::test::run_dtsim("sweep " + sweep + " --shard " + shard + " --out " + (tmp / "sharded").string(), tmp / "");
    REQUIRE(r.code == 0);
  }
  REQUIRE(!fs::exists(tmp / "sharded" / "table.csv"));
  const auto c = dts::test::run_dtsim("sweep " + sweep + " --collate --out " + (tmp / "sharded").string(), tmp / "");
  INFO(c.err);
  REQUIRE(c.code == 0);
  REQUIRE(slurp(tmp / "sharded" / "table.csv") == slurp(tmp / "one" / "table.csv"));
}
