// Issue 4's acceptance: every algorithm of the EASGD family for HPC (papers/easgd_hpc.md) runs from one
// experiment file in real numerics and reaches the accuracy its synchronous counterpart reaches on the same
// budget (the same steps per worker, so the same samples). Logistic regression on real Fashion-MNIST, 4
// workers, batch 32, 600 steps each; accuracy is the mean of the last two evaluations (steps 500 and 600 of
// the model rank 0 keeps), since single iterates of SGD on this problem swing by about 0.02.
//   SGD family      async_sgd, hogwild_sgd vs sync_sgd; async_msgd vs sync_sgd with the same momentum.
//   EASGD family    easgd_original, easgd_async, easgd_hogwild vs easgd_sync (variant 1); measgd_async vs
//                   easgd_sync with the same momentum. An elastic center moves by alpha toward the workers,
//                   so this family trails plain SGD by about 0.02 here: its counterpart is Sync EASGD.
//   easgd_sync 2 and 3 only move the master and overlap the exchange: the same numbers as variant 1, bit for bit.
// A tolerance of 0.025 admits staleness (Async MSGD trails by about 0.018: staleness acts as extra momentum,
// Mitliagkas et al. 2016) but not a broken update (accuracy near 0.1) or a lost worker.
#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;
using nlohmann::json;

namespace {

const fs::path kFmnist = "/usr/share/datasets/fashion-mnist";

json variant(const std::string& name, json algorithm) {
  if (!algorithm.contains("name")) algorithm["name"] = name;
  return {{"name", name}, {"algorithm", algorithm}};
}

json hpc_experiment() {
  const json momentum = {{"kind", "momentum"}, {"lr", 0.005}, {"momentum", 0.9}};
  json variants = json::array();
  for (const char* name : {"sync_sgd", "async_sgd", "hogwild_sgd", "easgd_original", "easgd_async", "easgd_hogwild"})
    variants.push_back(variant(name, json::object()));
  variants.push_back(variant("async_msgd", {{"optimizer", momentum}}));
  variants.push_back(variant("sync_msgd", {{"name", "sync_sgd"}, {"optimizer", momentum}}));
  variants.push_back(variant("measgd_async", {{"optimizer", momentum}}));
  variants.push_back(variant("easgd_sync_m", {{"name", "easgd_sync"}, {"variant", 1}, {"optimizer", momentum}}));
  for (int v = 1; v <= 3; ++v)
    variants.push_back(variant("easgd_sync" + std::to_string(v), {{"name", "easgd_sync"}, {"variant", v}}));
  return {{"name", "hpc_accuracy"},
          {"seed", 3},
          {"platform",
           {{"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}},
            {"link_bandwidth_bps", 1e9},
            {"link_latency_s", 1e-4}}},
          {"model", {{"name", "logreg"}, {"numerics", "real"}, {"backend", "onednn"}}},
          {"data", {{"name", "fashion_mnist"}, {"dir", kFmnist.string()}}},
          {"algorithm",
           {{"name", "sync_sgd"}, {"workers", 4}, {"batch_size", 32}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.05}}}}},
          {"run", {{"steps", 600}, {"eval_every_steps", 100}, {"log_every_steps", 100}}},
          {"variants", variants}};
}

// The test accuracies of metrics.csv, in order (the rows with that column filled).
std::vector<double> evaluations(const fs::path& metrics) {
  std::istringstream in(slurp(metrics));
  std::string line;
  std::getline(in, line);
  REQUIRE(line.rfind("time_s,rank,step,loss,test_accuracy,", 0) == 0);
  std::vector<double> acc;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    if (cells.size() > 4 && !cells[4].empty()) acc.push_back(std::stod(cells[4]));
  }
  return acc;
}

}  // namespace

TEST_CASE("EASGD family for HPC: each algorithm reaches its synchronous counterpart's accuracy", "[golden][hpc]") {
  if (!fs::exists(kFmnist / "train-images-idx3-ubyte.gz")) {
    WARN("no Fashion-MNIST under " << kFmnist << "; skipped");
    return;
  }
  TempDir tmp;
  const json experiment = hpc_experiment();
  write_json(tmp / "hpc.json", experiment);
  const auto r = run_dtsim("run " + (tmp / "hpc.json").string() + " --out " + (tmp / "out").string(), tmp / "",
                           "OMP_NUM_THREADS=1 ");
  INFO(r.err);
  REQUIRE(r.code == 0);

  std::map<std::string, double> acc;
  std::map<std::string, std::vector<double>> curve;
  for (const auto& v : experiment["variants"]) {
    const std::string name = v["name"];
    curve[name] = evaluations(tmp / "out" / name / "metrics.csv");
    const auto& c = curve[name];
    REQUIRE(c.size() >= 3);
    acc[name] = (c[c.size() - 1] + c[c.size() - 2]) / 2;
  }
  const std::vector<std::pair<std::string, std::string>> counterpart = {
      {"async_sgd", "sync_sgd"},         {"hogwild_sgd", "sync_sgd"},    {"async_msgd", "sync_msgd"},
      {"easgd_original", "easgd_sync1"}, {"easgd_async", "easgd_sync1"}, {"easgd_hogwild", "easgd_sync1"},
      {"measgd_async", "easgd_sync_m"},  {"easgd_sync2", "easgd_sync1"}, {"easgd_sync3", "easgd_sync1"}};
  for (const auto& [algo, sync] : counterpart) {
    INFO(algo << " " << acc[algo] << " vs " << sync << " " << acc[sync]);
    CHECK(acc[algo] >= acc[sync] - 0.025);
  }
  // The counterparts themselves learn (10 classes: chance is 0.1; this linear model tops out near 0.84).
  for (const char* sync : {"sync_sgd", "sync_msgd", "easgd_sync1", "easgd_sync_m"}) {
    INFO(sync << " " << acc[sync]);
    CHECK(acc[sync] > 0.77);
  }
  CHECK(curve["easgd_sync2"] == curve["easgd_sync1"]);
  CHECK(curve["easgd_sync3"] == curve["easgd_sync1"]);
}
