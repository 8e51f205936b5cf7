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
#include "tests/golden/study_check.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::study_dir;
using dts::test::study_files;

TEST_CASE("gossipgrad study: every experiment, variant and sweep validates", "[golden][gossipgrad]") {
  const std::set<std::string> gs = dts::test::check_study_files("gossipgrad", 'g');
  CHECK(gs == std::set<std::string>{"g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9", "g10", "g11"});
}

TEST_CASE("gossipgrad study: --check fails on a bad key in a variant", "[golden][gossipgrad]") {
  TempDir tmp;
  const auto g11 = (study_dir("gossipgrad") / "g11_progress.json").string();
  const auto r = run_dtsim("run " + g11 + " --check --set algorithm.progres=none", tmp / "");
  CHECK(r.code == 2);
  CHECK(r.err.find("progres") != std::string::npos);
}
