// Recorder::observe: the workers' mean model and their consensus distance (experiments/runner/replicas.hpp),
// as arithmetic and through the dtsim binary.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "experiments/runner/replicas.hpp"
#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

TEST_CASE("replicas: the mean and the root mean square distance from it", "[golden][replicas]") {
  const std::vector<std::vector<float>> w = {{0, 0, 4}, {2, 0, 4}, {1, 3, 4}, {1, -3, 4}};
  dts::exp::ReplicaSum sum;
  for (std::size_t i = 0; i < w.size(); ++i)
    sum.add(dts::ConstSlice(std::span<const float>(w[i])), 0.5 * static_cast<double>(i));
  REQUIRE(sum.count == 4);
  REQUIRE(sum.last_time_s == 1.5);
  REQUIRE(sum.mean() == std::vector<float>{1, 0, 4});
  // Squared distances from (1, 0, 4): 1, 1, 9, 9.
  REQUIRE(sum.consensus_distance() == Approx(std::sqrt(20.0 / 4)).epsilon(1e-12));

  dts::exp::ReplicaSum same;
  for (int i = 0; i < 3; ++i) same.add(dts::ConstSlice(std::span<const float>(w[2])), 0);
  REQUIRE(same.consensus_distance() == 0.0);
}

namespace {

struct Row {
  std::string rank, step, accuracy, kind, distance;
};

std::vector<Row> rows(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  REQUIRE(line ==
          "time_s,rank,step,loss,test_accuracy,test_loss,bytes_sent,bytes_received,kind,clock,consensus_distance");
  std::vector<Row> out;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::istringstream l(line);
    for (std::string cell; std::getline(l, cell, ',');) c.push_back(cell);
    if (line.back() == ',') c.emplace_back();
    REQUIRE(c.size() == 11);
    out.push_back({c[1], c[2], c[4], c[8], c[10]});
  }
  return out;
}

}  // namespace

TEST_CASE("dtsim run: gossip SGD records its workers' mean and consensus distance at each evaluation",
          "[golden][replicas]") {
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["algorithm"]["name"] = "gossip_sgd";
  exp["run"] = {{"steps", 24}, {"eval_every_steps", 8}, {"log_every_steps", 4}};
  write_json(tmp / "g.json", exp);
  const auto r = run_dtsim("run " + (tmp / "g.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  REQUIRE(r.code == 0);

  std::vector<Row> agg;
  for (const Row& row : rows(slurp(tmp / "out" / "metrics.csv")))
    if (row.kind == "aggregate") agg.push_back(row);
  REQUIRE(agg.size() == 3);  // steps 8, 16, 24
  for (std::size_t i = 0; i < agg.size(); ++i) {
    REQUIRE(agg[i].rank.empty());
    REQUIRE(agg[i].step == std::to_string(8 * (i + 1)));
    REQUIRE(!agg[i].accuracy.empty());
    REQUIRE(std::stod(agg[i].distance) > 0);  // gossip's replicas differ between exchanges
  }
  const auto s = nlohmann::json::parse(slurp(tmp / "out" / "summary.json"));
  REQUIRE(s["aggregate"]["step"] == 24);
  REQUIRE(s["aggregate"]["test_accuracy"].get<double>() == Approx(std::stod(agg.back().accuracy)).margin(1e-6));
  // gossip_sgd's final model is the workers' average too (a float allreduce, not the double mean).
  REQUIRE(s["aggregate"]["test_accuracy"].get<double>() == Approx(s["test_accuracy"].get<double>()).margin(3.0 / 512));
}

TEST_CASE("dtsim run: an algorithm whose workers share one model records no aggregate rows", "[golden][replicas]") {
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["run"] = {{"steps", 16}, {"eval_every_steps", 8}};
  write_json(tmp / "a.json", exp);
  REQUIRE(run_dtsim("run " + (tmp / "a.json").string() + " --out " + (tmp / "out").string(), tmp / "").code == 0);
  for (const Row& row : rows(slurp(tmp / "out" / "metrics.csv"))) REQUIRE(row.kind != "aggregate");
  REQUIRE(!nlohmann::json::parse(slurp(tmp / "out" / "summary.json")).contains("aggregate"));
}

TEST_CASE("dtsim run: run.eval_replicas evaluates every worker's own replica at each observed step",
          "[golden][replicas]") {
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["algorithm"]["name"] = "gossip_sgd";
  exp["run"] = {{"steps", 24}, {"eval_every_steps", 8}, {"log_every_steps", 4}, {"eval_replicas", true}};
  write_json(tmp / "g.json", exp);
  REQUIRE(run_dtsim("run " + (tmp / "g.json").string() + " --out " + (tmp / "out").string(), tmp / "").code == 0);

  const int workers = exp["algorithm"]["workers"].get<int>();
  std::map<std::string, std::set<std::string>> ranks_at;  // step -> ranks with a replica row
  std::set<std::string> accuracies;
  for (const Row& row : rows(slurp(tmp / "out" / "metrics.csv"))) {
    if (row.kind != "replica") continue;
    REQUIRE(!row.accuracy.empty());
    REQUIRE(ranks_at[row.step].insert(row.rank).second);  // one row per rank and step
    accuracies.insert(row.accuracy);
  }
  REQUIRE(ranks_at.size() == 3);  // steps 8, 16, 24
  for (const auto& [step, ranks] : ranks_at) REQUIRE(ranks.size() == static_cast<std::size_t>(workers));
  REQUIRE(accuracies.size() > 1);  // the replicas differ between exchanges, and so do their accuracies

  exp["model"]["numerics"] = "modeled";
  exp["data"]["modeled"] = true;
  write_json(tmp / "m.json", exp);
  const auto r = run_dtsim("run " + (tmp / "m.json").string() + " --check", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE(r.err.find("/run/eval_replicas") != std::string::npos);
}
