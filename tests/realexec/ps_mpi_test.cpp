// The MXNet-style parameter server (issue 17) on MPI against the simulator, from the same experiment file:
// ps_sync sums in worker order and is deterministic, so it ends with the simulator's model, losses and
// accuracies, with whole keys and with sliced ones (the momentum buffers on the servers); ps_async's
// interleaving is real, so it is only required to train, and to go on without a failed rank that holds no key.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::mpirun_dtsim;
using dts::test::rows_without_time;
using dts::test::summary_of;
using dts::test::write_json;

TEST_CASE("realexec: ps_sync on MPI ends with the simulator's model; ps_async trains", "[mpi]") {
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["model"]["name"] = "mlp";
  exp["algorithm"] = {{"name", "ps_sync"},
                      {"workers", 4},
                      {"batch_size", 16},
                      {"optimizer", {{"kind", "momentum"}, {"lr", 0.05}, {"momentum", 0.9}}}};
  exp["run"] = {{"steps", 16}, {"eval_every_steps", 8}, {"log_every_steps", 4}};
  exp["variants"] = {
      {{"name", "sync_whole"}},
      {{"name", "sync_sliced"}, {"algorithm", {{"bigarray_bound", 100}}}},
      {{"name", "async"},
       {"algorithm",
        // each push applied alone: momentum 0.9 on 4 workers' pushes at lr 0.05 diverges
        {{"name", "ps_async"}, {"bigarray_bound", 100}, {"optimizer", {{"kind", "sgd"}, {"momentum", nullptr}}}}}}};
  write_json(tmp / "ps.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "ps.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(4, (tmp / "ps.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"sync_whole", "sync_sliced"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    REQUIRE(s["test_accuracy"].get<double>() > 0.5);
    REQUIRE(m["final_model_hash"] == s["final_model_hash"]);
    REQUIRE(m["test_accuracy"] == s["test_accuracy"]);
    REQUIRE(m["messages"] == s["messages"]);
    REQUIRE(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
  // Slicing moves the keys, not the math: the same model either way (the sums run in worker order on each float).
  REQUIRE(summary_of(tmp / "sim" / "sync_sliced")["final_model_hash"] ==
          summary_of(tmp / "sim" / "sync_whole")["final_model_hash"]);
  REQUIRE(summary_of(tmp / "mpi" / "async")["test_accuracy"].get<double>() > 0.5);
  REQUIRE(summary_of(tmp / "sim" / "async")["test_accuracy"].get<double>() > 0.5);
}

TEST_CASE("realexec: ps_async on MPI goes on without a failed rank whose server holds no key", "[mpi]") {
  /* Logistic regression's two keys sit on the servers of ranks 0 and 1; rank 2, a worker with an empty server, fails
   * 0.1 s into 3000 steps (0.3 s of training here). The servers drop it and serve the others to the end, as on the
   * simulator. The workers' observations (Recorder::observe, every 100 steps and the last) are summed over the
   * workers: the steps the failed worker did not observe have no replicas' row, and their sums, which it never
   * started, must not keep the survivors waiting (they did, until the hang limit, before VectorSums::finish
   * completed them without its share). */
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["algorithm"] = {{"name", "ps_async"}, {"workers", 3}, {"batch_size", 16}, {"optimizer", {{"lr", 0.1}}}};
  exp["run"] = {{"steps", 3000}, {"eval_every_steps", 100}, {"log_every_steps", 500}};
  exp["scenario"] = {{"failures", {{{"rank", 2}, {"at_s", 0.1}}}}};
  write_json(tmp / "ps.json", exp);
  const auto r =
      mpirun_dtsim(3, (tmp / "ps.json").string() + " --hang-timeout 5 --out " + (tmp / "mpi").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::map<int, long> steps;  // ranks.csv: rank,steps,idle_s,waited_s
  std::istringstream ranks(dts::test::slurp(tmp / "mpi" / "ranks.csv"));
  std::string line;
  std::getline(ranks, line);
  while (std::getline(ranks, line)) steps[std::stoi(line)] = std::stol(line.substr(line.find(',') + 1));
  CHECK(steps[0] == 3000);
  CHECK(steps[1] == 3000);
  REQUIRE(steps[2] < 3000);
  std::istringstream metrics(dts::test::slurp(tmp / "mpi" / "metrics.csv"));
  std::getline(metrics, line);  // time_s,rank,step,...,kind,...
  while (std::getline(metrics, line)) {
    if (line.find(",aggregate,") == std::string::npos) continue;
    INFO(line);
    const std::string step = line.substr(line.find(",,") + 2);
    CHECK(std::stol(step) <= steps[2]);
  }
  const auto s = summary_of(tmp / "mpi");
  CHECK(s["test_accuracy"].get<double>() > 0.5);
  if (s.contains("aggregate") && !s["aggregate"].is_null()) CHECK(s["aggregate"]["step"].get<long>() <= steps[2]);
}
