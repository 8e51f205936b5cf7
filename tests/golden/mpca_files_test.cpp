// The experiment files of experiments/mpca (papers/mpca_sgd.md §15, M1-M13) through the dtsim binary: every
// experiment and every variant validates (`dtsim run --check`), and each M run here has its file (the others are
// not run: see experiments/mpca/README.md). M1's file carries the Spark overheads that experiments/mpca/m1_fit
// fits, with the broadcast compression they were fitted beside, and the same values as every other file that runs
// mpca or sparknet_avg.
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
  const double compress = m1["algorithm"]["broadcast_compress_Bps"];
  CHECK(job > 0);
  CHECK(per_mib > 0);
  CHECK(compress > 0);
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
      CHECK(a["broadcast_compress_Bps"] == compress);
      ++checked;
    }
  }
  CHECK(checked > 4);
}

TEST_CASE("mpca study: a comparison with easgd_driver jitters the workers, the timing files measure a window",
          "[golden][mpca]") {
  // Without jitter easgd_driver's workers ask for x~ in lockstep (experiments/mpca/README.md, "Deviations").
  int jittered = 0;
  for (const auto& f : study_files("mpca")) {
    const auto j = nlohmann::json::parse(slurp(f));
    bool easgd = j["algorithm"].value("name", "") == "easgd_driver";
    for (const auto& v : j.value("variants", nlohmann::json::array()))
      easgd = easgd || (v.contains("algorithm") && v["algorithm"].value("name", "") == "easgd_driver");
    if (!easgd) continue;
    INFO(f.string());
    REQUIRE(j.contains("scenario"));
    const auto& jitter = j["scenario"]["jitter"];
    REQUIRE(jitter.size() == 1);
    CHECK(jitter[0]["ranks"] == "workers");
    CHECK(jitter[0]["sigma"].get<double>() > 0);
    ++jittered;
  }
  CHECK(jittered == 3);  // M5, M11, M13
  for (const char* name : {"m5_system_metrics.json", "m6_exchange_patterns.json", "m11_easgd_tau.json"}) {
    INFO(name);
    const auto j = nlohmann::json::parse(slurp(study_dir("mpca") / name));
    CHECK(j["run"]["measure_from_step"].get<int>() > 0);
    for (const auto& v : j["variants"]) {
      if (v.contains("run") && v["run"].contains("steps")) CHECK(v["run"]["measure_from_step"].get<int>() > 0);
    }
  }
}
