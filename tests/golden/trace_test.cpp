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

TEST_CASE("dtsim run: the Chrome trace's link counters carry every message's bytes over each link of its route",
          "[golden][trace]") {
  /* Star, message fidelity, no bandwidth factor and no cross-traffic: a message of S bytes uses its sender's
   * up link and its receiver's down link, so the links' shares integrated over time, times their bandwidth,
   * add up to 2 x the bytes sent; no link is ever used beyond its bandwidth. */
  TempDir tmp;
  nlohmann::json exp = dts::test::tiny_experiment();
  exp["platform"]["simgrid_config"] = {{"network/crosstraffic", "0"}, {"network/bandwidth-factor", "1"}};
  exp["run"] = {{"steps", 12}, {"eval_every_steps", 4}, {"trace", "chrome"}, {"fidelity", "message"}};
  write_json(tmp / "t.json", exp);
  const auto r = run_dtsim("run " + (tmp / "t.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const double bandwidth_Bps = exp["platform"]["link_bandwidth_bps"].get<double>() / 8;
  for (const std::string variant : {"allreduce_sgd", "easgd_async"}) {
    INFO(variant);
    const fs::path dir = tmp / "out" / variant;
    const auto trace = nlohmann::json::parse(slurp(dir / "trace.json"));
    const auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
    std::map<std::string, std::vector<std::pair<double, double>>> counters;  // link -> (ts us, share)
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "C") counters[e["name"]].emplace_back(e["ts"].get<double>(), e["args"]["share"].get<double>());
    }
    REQUIRE(counters.size() >= 2 * summary["ranks"].get<std::size_t>());
    const double end_us = summary["simulated_time_s"].get<double>() * 1e6;
    double bytes = 0;
    for (const auto& [link, points] : counters) {
      for (std::size_t i = 0; i < points.size(); ++i) {
        REQUIRE(points[i].second <= 1 + 1e-9);
        const double until = i + 1 < points.size() ? points[i + 1].first : end_us;
        REQUIRE(until >= points[i].first - 1e-6);  // ts is printed to the picosecond
        bytes += points[i].second * (until - points[i].first) * 1e-6 * bandwidth_Bps;
      }
    }
    REQUIRE(bytes == Approx(2 * summary["bytes_sent_total"].get<double>()).epsilon(1e-6));
  }
}
