// The calibration microbenchmarks (issue 19) on MPI from the simulator's experiment file: the same messages and
// bytes per rank, the same loss rows (the overlap's compute is the same Trainer), so that a figure measured on
// MPI and one predicted by the simulator count the same work.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::mpirun_dtsim;
using dts::test::rows_without_time;
using dts::test::summary_of;
using dts::test::write_json;

TEST_CASE("realexec: microbench's ping-pong, exchange and overlap send on MPI what the simulator sends", "[mpi]") {
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp["model"]["name"] = "mlp";
  exp["algorithm"] = {{"name", "microbench"}, {"workers", 3}, {"batch_size", 16}, {"bytes", 40000}, {"messages", 3}};
  exp["run"] = {{"steps", 6}, {"eval_every_steps", 0}, {"log_every_steps", 2}};
  exp["variants"] = {{{"name", "pingpong"}},
                     {{"name", "exchange"}, {"algorithm", {{"mode", "exchange"}}}},
                     {{"name", "overlap"}, {"algorithm", {{"mode", "overlap"}}}}};
  write_json(tmp / "mb.json", exp);
  const auto sim =
      dts::test::run_dtsim("run " + (tmp / "mb.json").string() + " --out " + (tmp / "sim").string(), tmp / "");
  INFO(sim.err);
  REQUIRE(sim.code == 0);
  const auto mpi = mpirun_dtsim(3, (tmp / "mb.json").string() + " --out " + (tmp / "mpi").string(), tmp / "");
  INFO(mpi.err);
  REQUIRE(mpi.code == 0);
  for (const std::string variant : {"pingpong", "exchange", "overlap"}) {
    INFO(variant);
    const auto s = summary_of(tmp / "sim" / variant), m = summary_of(tmp / "mpi" / variant);
    CHECK(m["messages"] == s["messages"]);
    CHECK(m["bytes_sent_per_rank"] == s["bytes_sent_per_rank"]);
    CHECK(s["bytes_sent_per_rank"][0] == 6 * 3 * 40000);
    CHECK(rows_without_time(tmp / "mpi" / variant) == rows_without_time(tmp / "sim" / variant));
  }
}
