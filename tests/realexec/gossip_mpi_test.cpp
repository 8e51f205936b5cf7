// Issue 16's algorithms on MPI against the simulator, from the same experiment file: the synchronous gossip
// family, gossip SGD's replica rows (Recorder::observe), GossipGraD and AGD end on the simulator's models.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::mpirun_dtsim;
using dts::test::require_same_aggregate;
using dts::test::rows_without_time;
using dts::test::slurp;
using dts::test::summary_of;
using dts::test::write_json;

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
    // With an averaged final model, rank 0's own is recorded beside it, the same on both backends.
    const bool averaged = variant != "literal_rank0";
    REQUIRE(s.contains("rank0_model_hash") == averaged);
    if (averaged) {
      REQUIRE(m["rank0_model_hash"] == s["rank0_model_hash"]);
      REQUIRE(s["rank0_model_hash"] != s["final_model_hash"]);
      REQUIRE(m["rank0_test_accuracy"] == s["rank0_test_accuracy"]);
    }
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
