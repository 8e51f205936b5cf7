// `dtsim bench kernels` and `dtsim bench overhead` in their --quick smoke forms: they run and print a table.
// No speed is asserted (the machine is shared; benches only measure, bench.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {
// The words of each line of a table.
std::vector<std::vector<std::string>> words_of_lines(const std::string& out) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    auto& w = rows.emplace_back();
    for (std::string word; words >> word;) w.push_back(word);
  }
  return rows;
}

// Runs `dtsim ARGS` and returns its standard output, which it must have written with exit code 0.
std::string bench_output(const std::string& args) {
  TempDir tmp;
  const auto r = run_dtsim(args, tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  return slurp(tmp / "stdout.txt");
}
}  // namespace

TEST_CASE("dtsim bench kernels --quick: every model of the table runs, no peer", "[golden]") {
  TempDir tmp;
  const auto r = run_dtsim("bench kernels --quick --configs mlp:8,mlp_dropout:8,lenet:4,cifar10_quick:4", tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string out = slurp(tmp / "stdout.txt");
  INFO(out);
  for (const char* row : {"mlp ", "mlp_dropout", "lenet", "cifar10_quick"}) REQUIRE_THAT(out, Catch::Contains(row));
}

TEST_CASE("dtsim bench overhead --quick: simulated and bare runs of both algorithms", "[golden]") {
  TempDir tmp;
  auto exp = tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  const auto r = run_dtsim("bench overhead --quick --experiment " + (tmp / "tiny.json").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string out = slurp(tmp / "stdout.txt");
  INFO(out);
  REQUIRE_THAT(out, Catch::Contains("allreduce_sgd") && Catch::Contains("easgd_async"));
}

TEST_CASE(
    "dtsim bench overhead: an allreduce other than the ring, or an algorithm without a bare loop, is an input error",
    "[golden]") {
  // The bare loop runs the ring's plan: a tree's simulated run would be compared with another algorithm.
  TempDir tmp;
  auto exp = tiny_experiment();
  exp.erase("variants");
  exp["algorithm"]["allreduce"] = "tree";
  write_json(tmp / "tiny.json", exp);
  const auto r = run_dtsim(
      "bench overhead --quick --algorithms allreduce_sgd --experiment " + (tmp / "tiny.json").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("algorithm.allreduce") && Catch::Contains("ring"));
  REQUIRE(slurp(tmp / "stdout.txt").empty());  // refused before the table's header
  const auto unknown = run_dtsim("bench overhead --quick --algorithms allreduce_sgd,gossip_sgd", tmp / "");
  REQUIRE(unknown.code == 2);
  REQUIRE_THAT(unknown.err, Catch::Contains("no bare loop for 'gossip_sgd'"));
}

TEST_CASE("dtsim bench kernels: a model without a peer is an input error", "[golden]") {
  TempDir tmp;
  const auto r = run_dtsim("bench kernels --quick --configs logreg:8", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("logreg"));
}

TEST_CASE("dtsim bench scale --quick: every algorithm at both fidelities, no SMPI unless asked", "[golden]") {
  const std::string out = bench_output("bench scale --quick");
  INFO(out);
  // One measured row per case: "ALGO star FIDELITY 16 median (min-max) ...".
  const auto rows = words_of_lines(out);
  for (const std::string algo : {"ring", "tree", "gossip", "async_sgd", "gossipgrad"}) {
    for (const std::string fidelity : {"collective", "message"}) {
      const bool found = std::any_of(rows.begin(), rows.end(), [&](const std::vector<std::string>& w) {
        return w.size() >= 6 && w[0] == algo && w[1] == "star" && w[2] == fidelity && w[3] == "16" && w[5][0] == '(';
      });
      INFO(algo << " " << fidelity);
      REQUIRE(found);
    }
  }
  REQUIRE_THAT(out, !Catch::Contains("SMPI"));
}

TEST_CASE("dtsim bench scale: the growth exponents of wall s/iter and peak MB between rows", "[golden]") {
  const std::string out = bench_output(
      "bench scale --workers 16 32 --algos gossip --fidelity collective --platforms star --reps 1 --steps 2 --no-smpi");
  INFO(out);
  // "gossip star collective P median (min-max) setup run MB simulated growth": the last word.
  std::map<std::string, std::string> growth;
  for (const auto& w : words_of_lines(out)) {
    if (w.size() >= 4 && w[0] == "gossip") growth[w[3]] = w.back();
  }
  REQUIRE(growth.at("16") == "-");
  const std::string g = growth.at("32");
  const auto slash = g.find('/');
  REQUIRE(slash != std::string::npos);
  // Two numbers (their values are the machine's: a shared one at that).
  for (const std::string& e : {g.substr(0, slash), g.substr(slash + 1)}) {
    std::size_t used = 0;
    REQUIRE(std::isfinite(std::stod(e, &used)));
    REQUIRE(used == e.size());
  }
}

TEST_CASE("dtsim bench scale: run s beside wall s/iter; runs mostly after the last step are named", "[golden]") {
  const std::string out = bench_output(
      "bench scale --workers 16 --algos bidmach_grid gossip --fidelity collective --platforms star --reps 1 --steps 2 "
      "--no-smpi");
  INFO(out);
  // "ALGO star collective 16 median (min-max) setup run MB simulated growth": the whole run takes at least its
  // setup and first step.
  int rows = 0;
  for (const auto& w : words_of_lines(out)) {
    if (w.size() != 11 || w[1] != "star") continue;
    ++rows;
    REQUIRE(std::stod(w[7]) >= std::stod(w[6]));
  }
  REQUIRE(rows == 2);
  // BIDMach's rounds run beside the learners and go on after their last step; gossip's exchanges are its steps.
  REQUIRE_THAT(out, Catch::Contains("note: bidmach_grid: most of its runs' wall comes after the workers' last step"));
  REQUIRE_THAT(out, !Catch::Contains("note: gossip"));
}

TEST_CASE("dtsim bench scale --quick --smpi: SMPI beside; --smpi with --no-smpi is an input error", "[golden]") {
  TempDir tmp;
  auto r = run_dtsim("bench scale --quick --smpi --algos ring --fidelity collective", tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(slurp(tmp / "stdout.txt"), Catch::Contains("SMPI"));
  r = run_dtsim("bench scale --quick --smpi --no-smpi", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("--smpi"));
}
