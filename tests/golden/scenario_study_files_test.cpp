// The experiment and sweep files of experiments/scenarios (issue 15, item 5) through the dtsim binary: every
// file and every variant reads and validates, the scenario files they name under platforms/scenarios included.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;

TEST_CASE("experiments/scenarios: every experiment, variant and sweep reads and validates", "[golden]") {
  const fs::path dir = dts::test::source_dir() / "experiments" / "scenarios";
  TempDir tmp;
  for (const char* name : {"a_stragglers_testbed", "a_stragglers_ec2", "b_determinism", "c_jitter"}) {
    const auto r = run_dtsim("run " + (dir / (std::string(name) + ".json")).string() + " --check", tmp / "");
    INFO(name << ": " << r.err);
    REQUIRE(r.code == 0);
  }
  REQUIRE_THAT(slurp(tmp / "stdout.txt"), Catch::Contains("c_jitter: ok"));
  const auto r = run_dtsim(
      "sweep " + (dir / "c_jitter_sweep.json").string() + " --check --out " + (tmp / "sweep").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(slurp(tmp / "stdout.txt"), Catch::Contains("39 points"));
}
