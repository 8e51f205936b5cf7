// The experiment files of experiments/mpca (papers/mpca_sgd.md §15, M1-M13) through the dtsim binary: every
// experiment and every variant validates (`dtsim run --check`), and each M run here has its file (the others are
// not run: see experiments/mpca/README.md). M1's file carries the Spark overheads that experiments/mpca/m1_fit
// fits, and the same values as every other file that runs mpca or sparknet_avg.
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/golden/cli_harness.hpp"
#include "tests/golden/study_check.hpp"

using dts::test::slurp;
using dts::test::study_dir;
using dts::test::study_files;

TEST_CASE("mpca study: every experiment and variant validates", "[golden][mpca]") {
  const std::set<std::string> ms = dts::test::check_study_files("mpca", 'm');
  CHECK(ms == std::set<std::string>{"m1", "m5", "m6", "m7", "m8", "m9", "m10", "m11", "m12", "m13"});
}

TEST_CASE("mpca study: one set of fitted Spark overheads in every file", "[golden][mpca]") {
  const auto m1 = nlohmann::json::parse(slurp(study_dir("mpca") / "m1_calibration.json"));
  const double job = m1["algorithm"]["job_launch_s"], per_mib = m1["algorithm"]["collective_s_per_mib"];
  CHECK(job > 0);
  CHECK(per_mib > 0);
  int checked = 0;
  for (const auto& f : study_files("mpca")) {
    const auto j = nlohmann::json::parse(slurp(f));
    auto algorithms = nlohmann::json::array({j["algorithm"]});
    for (const auto& v : j.value("variants", nlohmann::json::array()))
      if (v.contains("algorithm")) algorithms.push_back(v["algorithm"]);
    for (const auto& a : algorithms) {
      if (!a.contains("job_launch_s") || a["job_launch_s"].is_null()) continue;
      INFO(f.string());
      CHECK(a["job_launch_s"] == job);
      CHECK(a["collective_s_per_mib"] == per_mib);
      ++checked;
    }
  }
  CHECK(checked > 4);
}
