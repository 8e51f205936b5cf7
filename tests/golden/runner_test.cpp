// The experiment runner end to end, through the dtsim binary: reproducible result files, a golden summary,
// and clear input errors (exit code 2, the file and key named, no result directory left behind).
#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

TEST_CASE("dtsim run: the same experiment twice writes identical metrics and summaries", "[golden]") {
  TempDir tmp;
  write_json(tmp / "tiny.json", tiny_experiment());
  for (const char* out : {"a", "b"}) {
    const auto r = run_dtsim("run " + (tmp / "tiny.json").string() + " --out " + (tmp / out).string(), tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  for (const char* variant : {"allreduce_sgd", "easgd_async"}) {
    for (const char* file : {"metrics.csv", "summary.json", "config.resolved.json", "ranks.csv", "waits.csv"}) {
      INFO(variant << "/" << file);
      const std::string a = slurp(tmp / "a" / variant / file);
      REQUIRE(!a.empty());
      REQUIRE(a == slurp(tmp / "b" / variant / file));
    }
  }
  // Both algorithms learn the synthetic task (a linear model separates its classes).
  for (const char* variant : {"allreduce_sgd", "easgd_async"}) {
    const auto s = nlohmann::json::parse(slurp(tmp / "a" / variant / "summary.json"));
    INFO(variant << ": " << s.dump());
    REQUIRE(s["test_accuracy"].get<double>() > 0.9);
    REQUIRE(s["simulated_time_s"].get<double>() > 0);
    // The time breakdown's critical path covers the run; every rank's own time covers its life.
    const auto& tb = s["time_breakdown"];
    REQUIRE(tb["run"]["total_s"].get<double>() == Approx(s["simulated_time_s"].get<double>()).epsilon(1e-9));
    for (const auto& r : tb["ranks"]) {
      double sum = 0;
      for (const auto& [k, v] : r["seconds"].items()) sum += v.get<double>();
      REQUIRE(sum == Approx(r["elapsed_s"].get<double>()).epsilon(1e-9).margin(1e-12));
    }
    REQUIRE(tb["run"]["communication_ratio"].get<double>() > 0);
  }
}

TEST_CASE("dtsim run: an unknown key is an input error naming its path, and nothing is written", "[golden]") {
  TempDir tmp;
  auto exp = tiny_experiment();
  exp["algorithm"]["elastic_alfa"] = 0.5;
  write_json(tmp / "bad.json", exp);
  const auto r = run_dtsim("run " + (tmp / "bad.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("bad.json") && Catch::Contains("/algorithm/elastic_alfa") &&
                          Catch::Contains("unknown key"));
  REQUIRE(!fs::exists(tmp / "out"));
}

TEST_CASE("dtsim run: an out-of-range value and a bad --set are input errors", "[golden]") {
  TempDir tmp;
  write_json(tmp / "tiny.json", tiny_experiment());
  const std::string base = "run " + (tmp / "tiny.json").string() + " --out " + (tmp / "out").string();
  auto r = run_dtsim(base + " --set algorithm.optimizer.lr=-1", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/algorithm/optimizer/lr") && Catch::Contains("out of range"));
  r = run_dtsim(base + " --set algorithm.workers=many", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/algorithm/workers"));
  REQUIRE(!fs::exists(tmp / "out"));
}

TEST_CASE("dtsim run: a missing or truncated dataset file is an input error, and nothing is written", "[golden]") {
  using namespace dts::data::testing;
  TempDir tmp;
  const Bytes pixels = pattern(10 * 28 * 28);
  write_file(tmp / "train-images", idx3(10, 28, 28, pixels), true);
  write_file(tmp / "train-labels", idx1(pattern(10, 3, 1)), true);
  Bytes cut = idx3(10, 28, 28, pixels);
  cut.resize(cut.size() - 100);
  write_file(tmp / "test-images", cut);  // 100 bytes short of what its header promises
  write_file(tmp / "test-labels", idx1(pattern(10, 3, 1)));
  auto exp = tiny_experiment();
  exp["model"]["name"] = "mlp";
  exp["data"] = {{"name", "idx"},
                 {"train_images", (tmp / "train-images").string()},
                 {"train_labels", (tmp / "train-labels").string()},
                 {"test_images", (tmp / "test-images").string()},
                 {"test_labels", (tmp / "test-labels").string()}};
  write_json(tmp / "truncated.json", exp);
  auto r = run_dtsim("run " + (tmp / "truncated.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("test-images") && Catch::Contains("truncated"));
  REQUIRE(!fs::exists(tmp / "out"));

  exp["data"]["train_images"] = (tmp / "no-such-file").string();
  write_json(tmp / "missing.json", exp);
  r = run_dtsim("run " + (tmp / "missing.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/data/train_images") && Catch::Contains("no-such-file"));
  REQUIRE(!fs::exists(tmp / "out"));
}

TEST_CASE("dtsim run: a missing experiment file or platform file is an input error", "[golden]") {
  TempDir tmp;
  auto r = run_dtsim("run " + (tmp / "nope.json").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("nope.json"));
  auto exp = tiny_experiment();
  exp["platform"] = "platforms/none.json";
  write_json(tmp / "p.json", exp);
  r = run_dtsim("run " + (tmp / "p.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/platform") && Catch::Contains("none.json"));
  REQUIRE(!fs::exists(tmp / "out"));
}

TEST_CASE("dtsim run: modeled numerics give the same simulated times as real numerics", "[golden]") {
  // Time comes from the device model and the network, never from the values computed, so dropping the math
  // must not move a single event. The gossip variants' pairs come from the choices every worker announces in
  // an all-gather: in modeled numerics it carries no values and every worker draws them (GossipControl).
  TempDir tmp;
  auto exp = tiny_experiment();
  for (const char* gossip : {"elastic_gossip", "gosgd"})
    exp["variants"].push_back({{"name", gossip}, {"algorithm", {{"name", gossip}, {"probability", 0.5}}}});
  write_json(tmp / "tiny.json", exp);
  for (const char* numerics : {"real", "modeled"}) {
    const auto r = run_dtsim("run " + (tmp / "tiny.json").string() + " --set model.numerics=" + numerics + " --out " +
                                 (tmp / numerics).string(),
                             tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  for (const char* variant : {"allreduce_sgd", "easgd_async", "elastic_gossip", "gosgd"}) {
    const auto real = nlohmann::json::parse(slurp(tmp / "real" / variant / "summary.json"));
    const auto modeled = nlohmann::json::parse(slurp(tmp / "modeled" / variant / "summary.json"));
    INFO(variant);
    REQUIRE(modeled["test_accuracy"].is_null());
    REQUIRE(modeled["simulated_time_s"] == real["simulated_time_s"]);
    REQUIRE(modeled["bytes_sent_per_rank"] == real["bytes_sent_per_rank"]);
    REQUIRE(modeled["messages"] == real["messages"]);
    REQUIRE(modeled["time_breakdown"] == real["time_breakdown"]);
  }
}

TEST_CASE("dtsim run: an interrupted run leaves neither a result nor a partial directory", "[golden]") {
  TempDir tmp;
  auto exp = tiny_experiment();
  exp["run"] = {{"epochs", 500}};  // far longer than the 2 s it is given
  write_json(tmp / "long.json", exp);
  const auto r = run_dtsim("run " + (tmp / "long.json").string() + " --out " + (tmp / "out").string(), tmp / "",
                           "timeout -s TERM 2 ");
  REQUIRE(r.code == 124);  // timeout(1): the command was stopped
  for (const auto& entry : fs::directory_iterator(tmp / "")) {
    INFO(entry.path().string());
    REQUIRE(entry.path().filename().string().rfind("out", 0) != 0);
  }
}

TEST_CASE("dtsim run: run.measure_from_step reports the steady state between two steps", "[golden]") {
  /* In details:
   *   o the tiny experiment (4 workers, 64 steps each over 2 epochs), every step logged, the window from step 8
   * Expectations
   *   o window.time_s = (the last worker's end of its last step) - (the last worker's end of step 8), from
   *     metrics.csv's train rows; s_per_step = time_s / (64 - 8); bytes by rank = the rows' differences
   *   o a window from a step at or beyond the run's last is an input error naming the key
   */
  TempDir tmp;
  auto exp = tiny_experiment();
  exp["run"]["log_every_steps"] = 1;
  exp["run"]["measure_from_step"] = 8;
  exp["variants"] = nlohmann::json::array(
      {{{"name", "allreduce_sgd"}}, {{"name", "easgd_async"}, {"algorithm", {{"name", "easgd_async"}}}}});
  write_json(tmp / "w.json", exp);
  const auto r = run_dtsim("run " + (tmp / "w.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* variant : {"allreduce_sgd", "easgd_async"}) {
    INFO(variant);
    const auto s = nlohmann::json::parse(slurp(tmp / "out" / variant / "summary.json"));
    const auto& w = s["window"];
    const std::int64_t last = s["steps_per_worker"].get<std::int64_t>();
    REQUIRE(w["from_step"] == 8);
    REQUIRE(w["to_step"] == last);
    std::istringstream csv(slurp(tmp / "out" / variant / "metrics.csv"));
    std::string line;
    std::getline(csv, line);  // header: time_s,rank,step,loss,...,bytes_sent,bytes_received,kind,...
    double from_s = 0, to_s = 0;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> sent;  // rank -> bytes at step 8, at the last
    while (std::getline(csv, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
      if (f.size() < 9 || f[8] != "train") continue;
      const std::int64_t step = std::stoll(f[2]);
      const double t = std::stod(f[0]);
      if (step == 8) from_s = std::max(from_s, t), sent[f[1]].first = std::stoull(f[6]);
      if (step == last) to_s = std::max(to_s, t), sent[f[1]].second = std::stoull(f[6]);
    }
    CHECK(w["time_s"].get<double>() == Approx(to_s - from_s).epsilon(1e-6));
    CHECK(w["s_per_step"].get<double>() == Approx((to_s - from_s) / double(last - 8)).epsilon(1e-6));
    for (const auto& [rank, b] : sent) CHECK(w["bytes_sent_by_rank"][rank].get<std::uint64_t>() == b.second - b.first);
  }
  exp["run"]["measure_from_step"] = 64;
  write_json(tmp / "bad.json", exp);
  const auto bad = run_dtsim("run " + (tmp / "bad.json").string() + " --check", tmp / "");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("/run/measure_from_step"));
}
