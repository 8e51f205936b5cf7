// run.trace: the Chrome trace against the run's own time breakdown and message count, and the Paje trace in
// each variant's result directory.
#include <catch2/catch.hpp>

#include <map>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

TEST_CASE("dtsim run: run.trace chrome writes a timeline whose spans add up to the time breakdown", "[golden][trace]") {
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();  // allreduce SGD, and asynchronous EASGD with a center
  exp["run"] = {{"steps", 12}, {"eval_every_steps", 4}, {"trace", "chrome"}};
  write_json(tmp / "t.json", exp);
  const auto r = run_dtsim("run " + (tmp / "t.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  for (const std::string variant : {"allreduce_sgd", "easgd_async"}) {
    INFO(variant);
    const fs::path dir = tmp / "out" / variant;
    const auto trace = nlohmann::json::parse(slurp(dir / "trace.json"));
    const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
    std::map<int, long> main_tid;  // rank -> its own actor's track
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"].get<std::string>().rfind("rank ", 0) == 0)
        main_tid[e["pid"].get<int>()] = e["tid"].get<long>();
    }
    REQUIRE(main_tid.size() == summary["ranks"].get<std::size_t>());
    std::map<std::pair<int, std::string>, double> seconds;
    int messages = 0;
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "X" && main_tid.at(e["pid"].get<int>()) == e["tid"].get<long>()) {
        REQUIRE(e["dur"].get<double>() > 0);
        seconds[{e["pid"].get<int>(), e["name"].get<std::string>()}] += e["dur"].get<double>() * 1e-6;
      }
      if (e["ph"] == "b") ++messages;
    }
    double compute = 0;
    for (const auto& rank : summary["time_breakdown"]["ranks"]) {
      for (const auto& [category, s] : rank["seconds"].items()) {
        INFO("rank " << rank["rank"] << " " << category);
        REQUIRE(seconds[{rank["rank"].get<int>(), category}] == Approx(s.get<double>()).margin(1e-9));
      }
      compute += rank["seconds"]["forward_backward"].get<double>();
    }
    REQUIRE(compute > 0);
    REQUIRE(messages == summary["messages"].get<int>());
  }
}

TEST_CASE("dtsim run: run.trace paje writes SimGrid's trace into each variant's directory, times unchanged",
          "[golden][trace]") {
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();
  exp["run"] = {{"steps", 4}};
  write_json(tmp / "plain.json", exp);
  exp["run"]["trace"] = "paje";
  write_json(tmp / "paje.json", exp);
  REQUIRE(run_dtsim("run " + (tmp / "plain.json").string() + " --out " + (tmp / "plain").string(), tmp / "").code == 0);
  REQUIRE(run_dtsim("run " + (tmp / "paje.json").string() + " --out " + (tmp / "paje").string(), tmp / "").code == 0);
  for (const std::string variant : {"allreduce_sgd", "easgd_async"}) {
    INFO(variant);
    const std::string paje = slurp(tmp / "paje" / variant / "simgrid.trace");
    REQUIRE_THAT(paje, Catch::Contains("PajeDefineContainerType") && Catch::Contains("PajeSetVariable"));
    REQUIRE(!fs::exists(tmp / "plain" / variant / "simgrid.trace"));
    const auto a = nlohmann::json::parse(slurp(tmp / "plain" / variant / "summary.json"));
    const auto b = nlohmann::json::parse(slurp(tmp / "paje" / variant / "summary.json"));
    REQUIRE(a["simulated_time_s"] == b["simulated_time_s"]);
  }
  exp["run"]["trace"] = "perfetto";
  write_json(tmp / "bad.json", exp);
  const auto r = run_dtsim("run " + (tmp / "bad.json").string() + " --out " + (tmp / "bad").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("/run/trace"));
  REQUIRE(!fs::exists(tmp / "bad"));
}
