// README "Behaviour under scenarios": the table is read from README.md and every cell is run through the dtsim
// binary on a tiny modeled experiment, against the same run without a scenario. A cell's first word is its outcome:
// slows, survives, stops, refused, or "-" (the algorithm has no such rank).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

namespace {

const std::vector<std::string> kColumns = {"straggler",     "jitter", "degraded link", "failed worker",
                                           "failed server", "join",   "leave"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line.substr(1));  // after the leading '|'
  std::string cell;
  while (std::getline(in, cell, '|')) out.push_back(trim(cell));
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// Algorithm -> (column -> outcome word), from README.md's section.
std::map<std::string, std::map<std::string, std::string>> readme_table() {
  std::stringstream readme(slurp(dts::test::source_dir() / "README.md"));
  std::string line;
  while (std::getline(readme, line) && line != "### Behaviour under scenarios") {
  }
  REQUIRE(line == "### Behaviour under scenarios");
  std::map<std::string, std::map<std::string, std::string>> table;
  std::vector<std::string> header;
  while (std::getline(readme, line) && line.rfind("#", 0) != 0) {
    if (line.rfind("| algorithm", 0) == 0) {
      header = cells(line);
      continue;
    }
    if (header.empty() || line.rfind("| `", 0) != 0) continue;
    const std::vector<std::string> row = cells(line);
    REQUIRE(row.size() == header.size());
    const std::string alg = row[0].substr(1, row[0].size() - 2);
    for (std::size_t i = 1; i < row.size(); ++i) {
      table[alg][header[i]] = row[i].substr(0, row[i].find_first_of(" :,"));
    }
  }
  REQUIRE(std::vector<std::string>(header.begin() + 1, header.end()) == kColumns);
  return table;
}

std::set<std::string> registered_algorithms(const fs::path& dir) {
  const auto r = run_dtsim("list", dir);
  REQUIRE(r.code == 0);
  std::stringstream out(slurp(dir / "stdout.txt"));
  std::string word;
  out >> word;
  REQUIRE(word == "algorithms:");
  std::set<std::string> names;
  std::string line;
  std::getline(out, line);
  std::stringstream words(line);
  while (words >> word) names.insert(word);
  return names;
}

nlohmann::json experiment(const std::string& alg) {
  return {{"name", "cell"},
          {"seed", 5},
          {"platform",
           {{"device", {{"peak_flops", 1e10}, {"mem_bw_Bps", 1e10}}},
            {"link_bandwidth_bps", 1e10},
            {"link_latency_s", 1e-4}}},
          {"model", {{"name", "mlp"}, {"numerics", "modeled"}}},
          {"data", {{"name", "fashion_mnist"}, {"modeled", true}}},
          {"algorithm",
           {{"name", alg},
            {"workers", 3},
            {"batch_size", 16},
            {"optimizer", {{"kind", "momentum"}, {"lr", 0.1}, {"momentum", 0.9}}}}},
          {"run", {{"steps", 20}, {"eval_every_steps", 0}, {"log_every_steps", 10}}}};
}

// The column's scenario for a run of `ranks` ranks that takes t0 seconds without one; `rank` is the one it names.
nlohmann::json scenario(const std::string& column, int ranks, double t0, int& rank) {
  const int worker = ranks - 1;
  rank = worker;
  if (column == "straggler") return {{"stragglers", {{{"ranks", {worker}}, {"factor", 4}}}}};
  if (column == "jitter")
    return {{"jitter", {{{"ranks", "workers"}, {"model", "two_point"}, {"probability", 0.5}, {"factor", 4}}}}};
  if (column == "degraded link") return {{"links", {{{"nic_of", {worker}}, {"bandwidth_factor", 0.05}}}}};
  if (column == "failed worker") return {{"failures", {{{"rank", worker}, {"at_s", t0 / 2}}}}};
  if (column == "failed server") {
    rank = 0;
    return {{"failures", {{{"rank", 0}, {"at_s", t0 / 2}}}}};
  }
  return {{column == "join" ? "joins" : "leaves", {{{"rank", worker}, {"at_s", t0 / 2}}}}};
}

// What one run did.
struct Outcome {
  int code = -1;
  std::string err;
  bool result_dir = false;
  double time_s = 0;  // simulated, when it ended normally
};

// One algorithm's runs, in `dir`: without a scenario (first), then one per column. Runs in a thread of its own.
struct AlgorithmRuns {
  std::string alg;
  fs::path dir;
  int ranks = 0;
  std::vector<int> named;  // per column: the rank its scenario names
  std::vector<Outcome> runs;

  Outcome run(const nlohmann::json& exp) const {
    const fs::path out = dir / "out";
    fs::remove_all(out);
    write_json(dir / "exp.json", exp);
    // A scenario must not hang a run: the guard kills it, and the exit code shows it.
    const auto r = run_dtsim("run exp.json --out out", dir, "cd " + dir.string() + " && timeout -s KILL 60 ");
    Outcome o{r.code, r.err, fs::exists(out), 0};
    if (r.code == 0) o.time_s = nlohmann::json::parse(slurp(out / "summary.json"))["simulated_time_s"].get<double>();
    return o;
  }
  void operator()() {
    runs.push_back(run(experiment(alg)));
    if (runs[0].code != 0) return;
    ranks = nlohmann::json::parse(slurp(dir / "out" / "summary.json"))["ranks"].get<int>();
    for (const std::string& column : kColumns) {
      auto exp = experiment(alg);
      exp["scenario"] = scenario(column, ranks, runs[0].time_s, named.emplace_back());
      runs.push_back(run(exp));
    }
  }
};

}  // namespace

TEST_CASE("README's behaviour under scenarios holds for every algorithm", "[golden]") {
  TempDir tmp;
  const auto table = readme_table();
  std::set<std::string> documented;
  for (const auto& [alg, row] : table) documented.insert(alg);
  REQUIRE(documented == registered_algorithms(tmp / ""));

  std::vector<AlgorithmRuns> all;
  for (const auto& [alg, row] : table) {
    all.push_back({alg, tmp / alg, 0, {}, {}});
    fs::create_directories(all.back().dir);
  }
  constexpr std::size_t kAtOnce = 3;  // child processes at a time
  for (std::size_t first = 0; first < all.size(); first += kAtOnce) {
    std::vector<std::thread> threads;
    for (std::size_t k = first; k < std::min(first + kAtOnce, all.size()); ++k) threads.emplace_back(std::ref(all[k]));
    for (auto& t : threads) t.join();
  }

  for (const AlgorithmRuns& a : all) {
    INFO(a.alg << " without a scenario: " << a.runs[0].err);
    REQUIRE(a.runs[0].code == 0);
    const double t0 = a.runs[0].time_s;
    REQUIRE(a.runs.size() == kColumns.size() + 1);
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      const std::string& column = kColumns[c];
      const std::string& outcome = table.at(a.alg).at(column);
      const Outcome& r = a.runs[c + 1];
      INFO(a.alg << ", " << column << ": README says " << outcome << "; exit code " << r.code << ", " << r.err);
      if (outcome == "slows" || outcome == "survives") {
        REQUIRE(r.code == 0);
        if (outcome == "slows") REQUIRE(r.time_s > t0 * 1.05);
      } else if (outcome == "stops") {
        REQUIRE(r.code == 1);
        REQUIRE(!r.result_dir);
        std::smatch m;
        const std::regex stopped("the run stopped at simulated time ([0-9.e+-]+) s: rank [0-9]+: .*peer rank " +
                                 std::to_string(a.named[c]) + " failed");
        REQUIRE(std::regex_search(r.err, m, stopped));
        REQUIRE(std::stod(m[1]) >= t0 / 2 * (1 - 1e-8));  // printed to 9 digits
      } else if (outcome == "refused") {
        REQUIRE(r.code == 2);
        REQUIRE(!r.result_dir);
        REQUIRE_THAT(r.err, Catch::Contains("/scenario/" + std::string(column == "join" ? "joins" : "leaves")));
      } else {
        REQUIRE(outcome == "-");
        REQUIRE(column == "failed server");
        REQUIRE(a.ranks == 3);  // no rank besides the workers
      }
    }
  }
}
