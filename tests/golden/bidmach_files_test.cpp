// The experiment files of experiments/bidmach (papers/bidmach.md §15, B1-B8) through the dtsim binary: every
// experiment and every variant validates (`dtsim run --check`), and each B that has runs of its own has its file
// (B3 and B5 read B1's runs).
#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/golden/study_check.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::study_dir;
using dts::test::study_files;

TEST_CASE("bidmach study: every experiment and variant validates", "[golden][bidmach]") {
  const std::set<std::string> bs = dts::test::check_study_files("bidmach", 'b');
  CHECK(bs == std::set<std::string>{"b1", "b2", "b4", "b6", "b7", "b8"});
}

TEST_CASE("bidmach study: B4's MPI runs validate with the run script's --set keys", "[golden][bidmach]") {
  // experiments/bidmach/run runs B4's 2x2 payloads on MPI from the same file, the payload set on the base.
  TempDir tmp;
  const auto b4 = (study_dir("bidmach") / "b4_raw_allreduce.json").string();
  const std::string sets =
      " --set variants=null --set algorithm.workers=4 --set model.numerics=real --set data.modeled=false"
      " --set data.channels=1 --set data.height=1 --set data.width=3999 --set data.classes=20";
  const auto ok = run_dtsim("run " + b4 + " --check" + sets, tmp / "");
  INFO(ok.err);
  CHECK(ok.code == 0);
  const auto bad = run_dtsim("run " + b4 + " --check" + sets + " --set data.width=7999", tmp / "");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("width") != std::string::npos);
}
