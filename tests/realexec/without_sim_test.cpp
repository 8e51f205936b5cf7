// A dtsim built without the simulator (DTS_WITH_SIM=OFF): `run --backend mpi` trains under mpirun as in the full
// build, with the experiment's platform kept as given; the simulator is an input error naming --backend sim.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::CliResult;
using dts::test::slurp;
using dts::test::write_json;

namespace {

// `mpirun -np N dtsim run --backend mpi ARGS`, its exit code and stderr.
CliResult mpirun_dtsim(int np, const std::string& args, const fs::path& dir) {
  return dts::test::run_dtsim("run --backend mpi " + args, dir,
                              std::string(DTS_MPIEXEC) +
                                  " --oversubscribe --mca mpi_yield_when_idle 1 --timeout 120 -np " +
                                  std::to_string(np) + " ");
}

fs::path write_tiny(const TempDir& tmp) {
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["run"]["fidelity"] = "collective";  // a simulator key: accepted, unread
  write_json(tmp / "tiny.json", exp);
  return tmp / "tiny.json";
}

}  // namespace

TEST_CASE("without the simulator: allreduce_sgd trains on MPI, the platform kept as given", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  const auto r = mpirun_dtsim(4, exp.string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto s = nlohmann::json::parse(slurp(tmp / "out" / "summary.json"));
  CHECK(s["backend"] == "mpi");
  CHECK(s["wall_time_s"].get<double>() > 0);
  CHECK(s["test_accuracy"].get<double>() > 0.9);
  const auto resolved = nlohmann::json::parse(slurp(tmp / "out" / "config.resolved.json"));
  CHECK(resolved["platform"] == dts::test::tiny_experiment()["platform"]);
  CHECK(resolved["versions"].count("simgrid") == 0);
}

TEST_CASE("without the simulator: --backend sim, and a platform that is no object, are input errors", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp);
  for (const std::string backend : {"", "--backend sim "}) {
    const auto r = dts::test::run_dtsim("run " + backend + exp.string() + " --out " + (tmp / "out").string(), tmp / "");
    INFO(backend << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("--backend sim") && Catch::Contains("built without the simulator"));
  }
  const auto r = mpirun_dtsim(4, exp.string() + " --set platform=3 --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("tiny.json:/platform") && Catch::Contains("expected a JSON object"));
  CHECK_FALSE(fs::exists(tmp / "out"));
}
