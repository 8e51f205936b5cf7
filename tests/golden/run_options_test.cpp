// dtsim run's command-line overrides: --set beats a variant's own value, --cfg beats the platform's and is
// recorded, and SimGrid's Paje trace lands in each variant's result directory.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {
const std::string kShort = " --set run.epochs=null --set run.steps=6";

nlohmann::json json_of(const fs::path& file) { return nlohmann::json::parse(slurp(file)); }
}  // namespace

TEST_CASE("dtsim run: --set beats a variant's own value; --set variants=... still changes the list", "[golden]") {
  TempDir tmp;
  write_json(tmp / "tiny.json", tiny_experiment());  // variant easgd_async sets algorithm.name
  auto r = run_dtsim("run " + (tmp / "tiny.json").string() + " --check --set algorithm.name=sync_sgd", tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string out = slurp(tmp / "stdout.txt");
  REQUIRE_THAT(out, Catch::Contains("allreduce_sgd: ok, sync_sgd") && Catch::Contains("easgd_async: ok, sync_sgd"));

  r = run_dtsim("run " + (tmp / "tiny.json").string() + " --check --set variants=null --set algorithm.workers=2",
                tmp / "");
  REQUIRE(r.code == 0);
  REQUIRE_THAT(slurp(tmp / "stdout.txt"), Catch::Contains("tiny: ok, allreduce_sgd, 2 workers"));

  // A --set that cannot apply over a variant names the variant.
  auto exp = tiny_experiment();
  exp["variants"][1]["algorithm"] = "easgd_async";
  write_json(tmp / "odd.json", exp);
  r = run_dtsim("run " + (tmp / "odd.json").string() + " --check --set algorithm.workers=2", tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("odd.json:/variants/1") && Catch::Contains("--set algorithm.workers=2"));
}

TEST_CASE("dtsim run: --cfg beats the platform's network model and is recorded in config.resolved.json", "[golden]") {
  TempDir tmp;
  auto exp = tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  const std::string base = "run " + (tmp / "tiny.json").string() + kShort;
  auto r = run_dtsim(base + " --out " + (tmp / "lv08").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  r = run_dtsim(base + " --out " + (tmp / "cm02").string() + " --cfg=network/model:CM02", tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  // CM02 has no latency or bandwidth correction factors: the same run takes less simulated time than LV08's.
  const double lv08 = json_of(tmp / "lv08" / "summary.json")["simulated_time_s"].get<double>();
  const double cm02 = json_of(tmp / "cm02" / "summary.json")["simulated_time_s"].get<double>();
  REQUIRE(cm02 < lv08);
  REQUIRE(json_of(tmp / "cm02" / "config.resolved.json")["simgrid_args"] ==
          nlohmann::json::array({"--cfg=network/model:CM02"}));
  REQUIRE(json_of(tmp / "lv08" / "config.resolved.json")["simgrid_args"] == nlohmann::json::array());

  // metrics.csv says what each row is and which clock time_s counts.
  const std::string csv = slurp(tmp / "lv08" / "metrics.csv");
  REQUIRE(csv.rfind(
              "time_s,rank,step,loss,test_accuracy,test_loss,bytes_sent,bytes_received,kind,clock,consensus_distance\n",
              0) == 0);
  REQUIRE_THAT(csv, Catch::Contains(",train,simulated,\n") && Catch::Contains(",eval,simulated,\n"));
}

TEST_CASE("dtsim run: --cfg=tracing:yes writes a Paje trace into each variant's result directory", "[golden]") {
  TempDir tmp;
  write_json(tmp / "tiny.json", tiny_experiment());
  const auto r =
      run_dtsim("run tiny.json --out out --cfg=tracing:yes" + kShort, tmp / "", "cd " + (tmp / "").string() + " && ");
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const char* variant : {"allreduce_sgd", "easgd_async"}) {
    INFO(variant);
    REQUIRE_THAT(slurp(tmp / "out" / variant / "simgrid.trace"), Catch::Contains("PajeDefineContainerType"));
  }
  // The progress line names the variant, k of n, and the wall time.
  REQUIRE_THAT(r.err, Catch::Contains("[allreduce_sgd, 1 of 2] step 6/6  simulated ") &&
                          Catch::Contains("[easgd_async, 2 of 2] step 6/6  simulated ") && Catch::Contains("  wall "));
  REQUIRE(!fs::exists(tmp / "simgrid.trace"));  // nothing in the current directory

  const auto refused =
      run_dtsim("run tiny.json --check --cfg=tracing/filename:t.trace", tmp / "", "cd " + (tmp / "").string() + " && ");
  REQUIRE(refused.code == 2);
  REQUIRE_THAT(refused.err, Catch::Contains("tracing/filename"));
}
