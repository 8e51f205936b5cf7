// What shows a scenario's effect, through the dtsim binary: ranks.csv (steps and idle time per rank),
// waits.csv (each rank's blocked time by the peer that ended the waits) and summary.json "scenario" (the
// events that fired, with their times).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <sstream>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::platform_file;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

namespace {

// allreduce SGD (a ring) of 4 workers on EC2, 20 steps of an MLP in modeled numerics.
nlohmann::json ring_experiment() {
  return {{"name", "ring"},
          {"platform", platform_file("ec2_10g.json")},
          {"model", {{"name", "mlp"}, {"numerics", "modeled"}}},
          {"data", {{"name", "fashion_mnist"}, {"modeled", true}}},
          {"algorithm", {{"name", "allreduce_sgd"}, {"workers", 4}, {"batch_size", 32}}},
          {"run", {{"steps", 20}}}};
}

struct RankRow {
  long long steps = 0;
  double idle_s = 0, waited_s = 0;
};

std::vector<std::vector<std::string>> csv(const fs::path& path, const std::string& header) {
  std::istringstream in(slurp(path));
  std::string line;
  std::getline(in, line);
  REQUIRE(line == header);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    for (std::string c; std::getline(l, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

std::vector<RankRow> ranks_of(const fs::path& dir) {
  std::vector<RankRow> out;
  for (const auto& c : csv(dir / "ranks.csv", "rank,steps,idle_s,waited_s")) {
    REQUIRE(c.size() == 4);
    REQUIRE(std::stoi(c[0]) == static_cast<int>(out.size()));
    out.push_back({std::stoll(c[1]), std::stod(c[2]), std::stod(c[3])});
  }
  return out;
}

// (rank, peer) -> seconds
std::map<std::pair<int, int>, double> waits_of(const fs::path& dir) {
  std::map<std::pair<int, int>, double> out;
  for (const auto& c : csv(dir / "waits.csv", "rank,peer,waited_s")) {
    REQUIRE(c.size() == 3);
    out[{std::stoi(c[0]), std::stoi(c[1])}] = std::stod(c[2]);
  }
  return out;
}

double waited_on(const std::map<std::pair<int, int>, double>& w, int rank, int peer) {
  const auto it = w.find({rank, peer});
  return it == w.end() ? 0.0 : it->second;
}

}  // namespace

TEST_CASE("dtsim run: a straggler makes the other ranks idle, waiting on it", "[golden][scenario]") {
  TempDir tmp;
  auto exp = ring_experiment();
  write_json(tmp / "base.json", exp);
  exp["scenario"] = {{"stragglers", {{{"ranks", {2}}, {"factor", 3}}}}};
  write_json(tmp / "slow.json", exp);
  for (const char* name : {"base", "slow"}) {
    const auto r = run_dtsim(
        "run " + (tmp / (std::string(name) + ".json")).string() + " --out " + (tmp / name).string(), tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  const auto base = ranks_of(tmp / "base"), slow = ranks_of(tmp / "slow");
  const auto base_w = waits_of(tmp / "base"), slow_w = waits_of(tmp / "slow");
  REQUIRE(base.size() == 4);
  REQUIRE(slow.size() == 4);
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(base[r].steps == 20);
    CHECK(slow[r].steps == 20);
    for (int p = 0; p < 4; ++p) CHECK(waited_on(slow_w, r, p) >= 0);
    CHECK(waited_on(slow_w, r, r) == 0);  // nobody waits on itself
    double sum = 0;
    for (int p = 0; p < 4; ++p) sum += waited_on(slow_w, r, p);
    CHECK(slow[r].waited_s == Approx(sum).epsilon(1e-6));
  }
  // Rank 2 computes 3x slower: the others wait for it, it waits less than they do.
  double base_on_2 = 0, slow_on_2 = 0;
  for (const int r : {0, 1, 3}) {
    INFO("rank " << r);
    CHECK(slow[r].idle_s > base[r].idle_s + 0.01);
    CHECK(slow[r].idle_s > slow[2].idle_s);
    base_on_2 += waited_on(base_w, r, 2);
    slow_on_2 += waited_on(slow_w, r, 2);
  }
  CHECK(slow_on_2 > base_on_2 + 0.02);
  CHECK(waited_on(slow_w, 3, 2) > waited_on(base_w, 3, 2));  // 3 receives from 2 in the ring
  CHECK(waited_on(slow_w, 1, 2) > waited_on(base_w, 1, 2));  // 1 sends to 2

  // summary.json lists the straggler's window beginning; no scenario, no events.
  const auto s = nlohmann::json::parse(slurp(tmp / "slow" / "summary.json"));
  CHECK(s["scenario"]["events"] ==
        nlohmann::json::parse(R"([{"at_s": 0.0, "event": "straggler_begin", "factor": 3.0, "ranks": [2]}])"));
  CHECK(nlohmann::json::parse(slurp(tmp / "base" / "summary.json"))["scenario"]["events"] == nlohmann::json::array());

  // Reruns write the same bytes.
  const auto r = run_dtsim("run " + (tmp / "slow.json").string() + " --out " + (tmp / "again").string(), tmp / "");
  REQUIRE(r.code == 0);
  for (const char* file : {"ranks.csv", "waits.csv", "summary.json", "metrics.csv"}) {
    INFO(file);
    CHECK(slurp(tmp / "slow" / file) == slurp(tmp / "again" / file));
  }
}

TEST_CASE("dtsim run: summary.json lists the scenario events that fired, in time order", "[golden][scenario]") {
  TempDir tmp;
  auto exp = ring_experiment();
  exp["scenario"] = nlohmann::json::parse(R"({
    "stragglers": [{"ranks": [2], "factor": 3, "from_s": 0.1, "until_s": 0.3},
                   {"ranks": [1], "factor": 2, "from_s": 0.05},
                   {"ranks": [3], "factor": 2, "from_s": 100}],
    "failures": [{"rank": 0, "at_s": 500}],
    "links": [{"nic_of": [1], "bandwidth_factor": 0.5},
              {"nic_of": [2], "bandwidth_factor": 0.5, "from_s": 0.15, "until_s": 0.2},
              {"nic_of": [3], "down": true, "from_s": 0.25, "until_s": 0.26}]})");
  write_json(tmp / "e.json", exp);
  const auto r = run_dtsim("run " + (tmp / "e.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto s = nlohmann::json::parse(slurp(tmp / "out" / "summary.json"));
  const double end = s["simulated_time_s"].get<double>();
  REQUIRE(end > 0.3);
  REQUIRE(end < 100);
  std::vector<std::pair<std::string, double>> got;
  for (const auto& e : s["scenario"]["events"])
    got.emplace_back(e["event"].get<std::string>(), e["at_s"].get<double>());
  // The rank-3 straggler (from 100 s) and the failure (at 500 s) come after the run's end.
  const std::vector<std::pair<std::string, double>> want = {
      {"link_change", 0},    {"straggler_begin", 0.05}, {"straggler_begin", 0.1}, {"link_change", 0.15},
      {"link_restore", 0.2}, {"link_down", 0.25},       {"link_up", 0.26},        {"straggler_end", 0.3}};
  CHECK(got == want);
  const auto& events = s["scenario"]["events"];
  REQUIRE(events.size() == 8);
  CHECK(events[3]["nic_of"] == nlohmann::json::array({2}));
  CHECK(events[5]["nic_of"] == nlohmann::json::array({3}));
  CHECK_FALSE(events[5].contains("bandwidth_factor"));
  CHECK(events[0]["nic_of"] == nlohmann::json::array({1}));
  CHECK(events[0]["bandwidth_factor"] == 0.5);
  CHECK(events[1]["ranks"] == nlohmann::json::array({1}));
  CHECK(events[2]["ranks"] == nlohmann::json::array({2}));
  CHECK(events[7]["factor"] == 3);
}
