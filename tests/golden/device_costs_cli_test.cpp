// The device model's compute-side cost keys (platforms/README.md "Compute-side costs") through the dtsim binary:
// a bad value is refused with exit 2 by `run --check` and by a run, naming the file and key, and nothing is written.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::write_json;

TEST_CASE("dtsim run: a bad compute-side cost of the device is an input error naming the key", "[golden]") {
  const auto [key, value, path] = GENERATE(table<std::string, nlohmann::json, std::string>({
      {"update_efficiency", 0.0, "/platform/device/update_efficiency: value 0 out of range"},
      {"reduce_efficiency", 2.0, "/platform/device/reduce_efficiency: value 2 out of range"},
      {"thread_scaling", {{"contention", -0.5}}, "/platform/device/thread_scaling/contention: value -0.5 out of range"},
  }));
  TempDir tmp;
  auto e = dts::test::tiny_experiment();
  e.erase("variants");
  e["run"] = {{"steps", 4}, {"log_every_steps", 2}};
  e["platform"]["device"][key] = value;
  write_json(tmp / "exp.json", e);
  for (const std::string& extra : {std::string(" --check"), " --out " + (tmp / "out").string()}) {
    const auto r = run_dtsim("run " + (tmp / "exp.json").string() + extra, tmp / "");
    INFO(extra << ": " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("exp.json:" + path));
  }
  CHECK(!fs::exists(tmp / "out"));
}
