// The experiment files of experiments/gossipgrad (papers/gossipgrad.md §18, G1-G11) through the dtsim binary:
// every experiment and every variant validates (`dtsim run --check`), every sweep and its experiment too
// (`dtsim sweep --check`), and each G of §18 has its file.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::count_lines;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::study_dir;
using dts::test::study_files;

TEST_CASE("gossipgrad study: every experiment, variant and sweep validates", "[golden][gossipgrad]") {
  std::set<std::string> gs;
  for (const auto& f : study_files("gossipgrad")) {
    TempDir tmp;
    const auto j = nlohmann::json::parse(slurp(f));
    const bool sweep = j.contains("experiment");
    const auto r = run_dtsim(
        std::string(sweep ? "sweep " : "run ") + f.string() + " --check --out " + (tmp / "out").string(), tmp / "");
    INFO(f.string() << "\n" << r.err);
    REQUIRE(r.code == 0);
    if (!sweep) {
      const std::size_t plans = j.contains("variants") ? j["variants"].size() : 1;
      CHECK(count_lines(slurp(tmp / "stdout.txt")) == plans);  // one "ok" line per plan
    }
    CHECK_FALSE(fs::exists(tmp / "out"));  // --check writes nothing
    const auto stem = f.stem().string();
    if (stem[0] == 'g') gs.insert(stem.substr(0, stem.find('_')));
  }
  CHECK(gs == std::set<std::string>{"g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", "g10", "g11"});
}

TEST_CASE("gossipgrad study: --check fails on a bad key in a variant", "[golden][gossipgrad]") {
  TempDir tmp;
  const auto g11 = (study_dir("gossipgrad") / "g11_progress.json").string();
  const auto r = run_dtsim("run " + g11 + " --check --set algorithm.progres=none", tmp / "");
  CHECK(r.code == 2);
  CHECK(r.err.find("progres") != std::string::npos);
}
