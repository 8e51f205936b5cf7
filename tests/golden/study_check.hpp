// The check every study's files test makes: each experiment file of experiments/STUDY validates through the dtsim
// binary (`run --check`, one "ok" line per plan; `sweep --check` for a sweep, ": ok, "), writing nothing.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace dts::test {

// Checks every file of the study; returns the tags (the stem up to its first '_') of the files named `prefix`N_...
inline std::set<std::string> check_study_files(const std::string& study, char prefix) {
  std::set<std::string> tags;
  for (const auto& f : study_files(study)) {
    data::testing::TempDir tmp;
    const auto j = nlohmann::json::parse(slurp(f));
    const bool sweep = j.contains("experiment");
    const auto r = run_dtsim(
        std::string(sweep ? "sweep " : "run ") + f.string() + " --check --out " + (tmp / "out").string(), tmp / "");
    INFO(f.string() << "\n" << r.err);
    REQUIRE(r.code == 0);
    if (sweep) {
      CHECK_THAT(slurp(tmp / "stdout.txt"), Catch::Contains(": ok, "));  // its experiment checked at every point
    } else {
      const std::size_t plans = j.contains("variants") ? j["variants"].size() : 1;
      CHECK(count_lines(slurp(tmp / "stdout.txt")) == plans);  // one "ok" line per plan
    }
    CHECK_FALSE(std::filesystem::exists(tmp / "out"));  // --check writes nothing
    const auto stem = f.stem().string();
    if (stem[0] == prefix) tags.insert(stem.substr(0, stem.find('_')));
  }
  return tags;
}

}  // namespace dts::test
