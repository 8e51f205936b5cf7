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

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::CliResult;
using dts::test::slurp;
using dts::test::write_json;

namespace {

// `env mpirun -np N dtsim ARGS`, its exit code and stderr; stdout is left in dir/stdout.txt.
CliResult mpirun(int np, const std::string& args, const fs::path& dir, const std::string& env = "") {
  const std::string cmd = env + " " + DTS_MPIEXEC + " --oversubscribe --mca mpi_yield_when_idle 1 --timeout 120 -np " +
                          std::to_string(np) + " " + DTSIM_BINARY + " " + args + " > " + (dir / "stdout.txt").string() +
                          " 2> " + (dir / "stderr.txt").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "stderr.txt")};
}

// `env mpirun -np N dtsim run --backend mpi ARGS`.
CliResult mpirun_dtsim(int np, const std::string& args, const fs::path& dir, const std::string& env = "") {
  return mpirun(np, "run --backend mpi " + args, dir, env);
}

// tiny_experiment() without its variants: allreduce_sgd, 4 workers.
fs::path write_tiny(const TempDir& tmp) {
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  return tmp / "tiny.json";
}

nlohmann::json summary_of(const fs::path& dir) { return nlohmann::json::parse(slurp(dir / "summary.json")); }

// Recorder::observe's row of the last step on MPI (m) and on the simulator (s): the same mean model (sums of a
// few floats in doubles are exact); the consensus distance sums squared norms in another order on MPI.
void require_same_aggregate(const nlohmann::json& m, const nlohmann::json& s) {
  REQUIRE(s.contains("aggregate"));
  REQUIRE(m["aggregate"]["step"] == s["aggregate"]["step"]);
  REQUIRE(m["aggregate"]["test_loss"] == s["aggregate"]["test_loss"]);
  REQUIRE(m["aggregate"]["test_accuracy"] == s["aggregate"]["test_accuracy"]);
  REQUIRE(m["aggregate"]["consensus_distance"].get<double>() ==
          Approx(s["aggregate"]["consensus_distance"].get<double>()).epsilon(1e-9));
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

// (rank, step, loss, test_accuracy, test_loss) of every metrics.csv row, without times and byte counters.
std::multiset<std::string> rows_without_time(const fs::path& dir) {
  std::multiset<std::string> rows;
  std::istringstream in(slurp(dir / "metrics.csv"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    cells.resize(11);
    rows.insert(cells[1] + "," + cells[2] + "," + cells[3] + "," + cells[4] + "," + cells[5] + "," + cells[10]);
  }
  return rows;
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

TEST_CASE("realexec: the synchronous gossip family on MPI ends with the simulator's models", "[mpi]") {
  // Choices drawn from (seed, rank, update), sums in rank order: the global and shared modes give the same bits
  // on both backends, the aggregate (final) and rank 0's own model alike, with Nesterov momentum as the thesis.
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["algorithm"] = {{"name", "elastic_gossip"},
                      {"workers", 4},
                      {"batch_size", 16},
                      {"probability", 0.5},
                      {"optimizer", {{"kind", "nesterov"}, {"lr", 0.05}, {"momentum", 0.9}}}};
  exp["run"]["epochs"] = 1;
  exp["variants"] = {
      {{"name", "eg_global"}},
      {{"name", "eg_shared"}, {"algorithm", {{"sync", "shared"}, {"alpha", 0.75}, {"cap_alpha", true}}}},
      {{"name", "pull"}, {"algorithm", {{"name", "gossip_pull"}}}},
      {{"name", "push"}, {"algorithm", {{"name", "gossip_push"}, {"sync", "shared"}}}},
      {{"name", "gosgd"}, {"algorithm", {{"name", "gosgd"}, {"period", 2}}}},
      {{"name", "no_comm"}, {"algorithm", {{"name", "no_comm"}, {"probability", nullptr}, {"barrier", true}}}}};
  write_json(tmp / "gossip.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "gossip.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "gossip.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"eg_global", "eg_shared", "pull", "push", "gosgd", "no_comm"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(s["test_accuracy"].get<double>() > 0.5);
    REQUIRE(s.contains("rank0_test_accuracy"));
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(m["rank0_model_hash"] == s["rank0_model_hash"]);
    REQUIRE(m["rank0_test_accuracy"] == s["rank0_test_accuracy"]);
    require_same_aggregate(m, s);
    REQUIRE(m["messages"] == s["messages"]);
    REQUIRE(m.value("counters", nlohmann::json()) == s.value("counters", nlohmann::json()));
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
  REQUIRE(summary_of(tmp / "sim" / "eg_global")["final_model_hash"] !=
          summary_of(tmp / "sim" / "eg_global")["rank0_model_hash"]);
}

TEST_CASE("realexec: gossip SGD on MPI records the simulator's replica means and consensus distances", "[mpi]") {
  // The workers' observations are summed by non-blocking reductions on MPI and in the process on the
  // simulator: the same models give the same rows (kind "aggregate": mean accuracy, consensus distance).
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["algorithm"]["name"] = "gossip_sgd";
  exp["run"] = {{"steps", 24}, {"eval_every_steps", 8}};
  write_json(tmp / "g.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "g.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "g.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  const auto s = summary_of(tmp / "sim"), m = summary_of(tmp / "mpi");
  REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
  require_same_aggregate(m, s);
  REQUIRE(rows_without_time(tmp / "mpi") == rows_without_time(tmp / "sim"));
  REQUIRE_THAT(slurp(tmp / "mpi" / "metrics.csv"), Catch::Contains(",aggregate,wall,"));
}

TEST_CASE("realexec: GossipGraD on MPI ends with the simulator's model", "[mpi]") {
  // Fixed partners per step, the same packed exchange (weights + momentum) and ring shuffle of rows, so the
  // same bits on both backends, for each lag and pattern.
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["algorithm"]["name"] = "gossipgrad";
  exp["algorithm"]["optimizer"] = {{"kind", "momentum"}, {"lr", 0.05}, {"momentum", 0.9}};
  exp["variants"] = {{{"name", "lag1"}},
                     {{"name", "hypercube_lag0"}, {"algorithm", {{"pattern", "hypercube"}, {"lag", 0}}}},
                     {{"name", "literal_rank0"}, {"algorithm", {{"lag", "literal"}, {"final_model", "rank0"}}}}};
  write_json(tmp / "gg.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "gg.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "gg.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"lag1", "hypercube_lag0", "literal_rank0"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(s["test_accuracy"].get<double>() > 0.9);
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(m["messages"] == s["messages"]);
    require_same_aggregate(m, s);
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
}

TEST_CASE("realexec: agd on MPI ends with the simulator's model", "[mpi]") {
  /* AGD (papers/gossipgrad.md §3.2) is deterministic: per-layer allreduces in reverse layer order, one at a time
   * (a chain of threads on MPI), the same reduction order on both backends; lr x sqrt(4) applied by the runner
   * on both. LeNet, so that there are several layers to reduce; the hierarchical ring with two
   * ranks per node; AGD every log2(4) = 2 steps. */
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["model"]["name"] = "lenet";  // 4 layers, 56 k parameters on 16 x 16 samples
  exp["data"]["height"] = exp["data"]["width"] = 16;
  exp["algorithm"]["name"] = "agd";
  exp["run"] = {{"steps", 12}, {"eval_every_steps", 6}, {"log_every_steps", 2}};
  exp["variants"] = {{{"name", "ring"}},
                     {{"name", "tree"}, {"algorithm", {{"allreduce", "tree"}}}},
                     {{"name", "hring"}, {"algorithm", {{"allreduce", "hierarchical_ring"}, {"ranks_per_node", 2}}}},
                     {{"name", "log_p"}, {"algorithm", {{"average_every", "log_p"}}}}};
  write_json(tmp / "agd.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "agd.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "agd.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"ring", "tree", "hring", "log_p"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(m["bytes_sent_per_rank"] == s["bytes_sent_per_rank"]);
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
  // Local steps between the averages: the replicas' mean and consensus distance as on the simulator.
  require_same_aggregate(summary_of(tmp / "mpi" / "log_p"), summary_of(tmp / "sim" / "log_p"));
  const auto cfg = nlohmann::json::parse(slurp(tmp / "sim" / "ring" / "config.resolved.json"));
  REQUIRE(cfg["algorithm"]["optimizer"]["lr"].get<double>() == Approx(0.2));  // 0.1 x sqrt(4)
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
   * after 2 s with no progress it ends the job with an error that names rank 2. */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = mpirun_dtsim(4, exp.string() + " --hang-timeout 2 --out " + (tmp / "out").string(), tmp / "",
                              "DTS_MPI_FAULT=2:hang");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains("a message from rank 2 (tag"));
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

TEST_CASE("realexec: dtsim bench allreduce times ring and tree with exact sums, tiny sizes", "[mpi]") {
  /* 1 float on 2 ranks (an empty ring chunk), 3 floats (uneven chunks), 1 KB and 40,004 bytes; 2 repetitions
   * of a few calls each. The bench checks every element of every sum and exits 1 on a wrong one. */
  TempDir tmp;
  const auto r = mpirun(2, "bench allreduce --sizes 4,12,1024,40004 --reps 2 --budget-s 0.01", tmp / "");
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
    CHECK((algo == "ring" || algo == "tree"));
    CHECK(iters >= 1);
    CHECK(t_med_us > 0);
    ++rows;
  }
  CHECK(rows == 8);
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
