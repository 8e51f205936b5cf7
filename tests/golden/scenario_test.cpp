// dtsim run with a scenario section: stragglers slow exactly the ranks and windows they name, jitter is
// reproducible from its seed, link changes and failures act, and a scenario's bad input is refused before the
// run, naming the key.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;
using nlohmann::json;

namespace {

// Modeled numerics with a fixed forward-backward time, on a small inline platform.
json modeled(const std::string& algorithm, int workers, int steps) {
  return {{"name", "sc"},
          {"seed", 7},
          {"platform",
           {{"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}},
            {"link_bandwidth_bps", 1e9},
            {"link_latency_s", 1e-4}}},
          {"model", {{"name", "mlp"}, {"numerics", "modeled"}, {"step_time_s", 0.1}}},
          {"data", {{"modeled", true}, {"name", "fashion_mnist"}}},
          {"algorithm", {{"name", algorithm}, {"workers", workers}, {"batch_size", 32}}},
          {"run", {{"steps", steps}, {"log_every_steps", 1}}}};
}

json file_json(const fs::path& file) { return json::parse(slurp(file)); }
double simulated(const fs::path& dir) { return file_json(dir / "summary.json")["simulated_time_s"].get<double>(); }

// The metrics.csv rows of one rank.
std::string rows_of(const fs::path& dir, int rank) {
  std::istringstream in(slurp(dir / "metrics.csv"));
  std::string line, out;
  while (std::getline(in, line)) {  // time_s,rank,...
    const auto comma = line.find(',');
    if (comma != std::string::npos &&
        line.substr(comma + 1, line.find(',', comma + 1) - comma - 1) == std::to_string(rank)) {
      out += line;
      out += '\n';
    }
  }
  return out;
}

struct Run {
  dts::test::CliResult cli;
  fs::path out;
};

Run run(const TempDir& tmp, const std::string& name, const json& exp, const std::string& extra = "") {
  write_json(tmp / (name + ".json"), exp);
  // A scenario must never hang a run: each gets 120 s (the longest takes under 2 s), then SIGTERM (exit 124).
  Run r{run_dtsim("run " + (tmp / (name + ".json")).string() + " --out " + (tmp / name).string() + extra, tmp / "",
                  "timeout -s TERM 120 "),
        tmp / name};
  return r;
}

}  // namespace

TEST_CASE("scenario: a straggler slows exactly its rank and its window, as the formula says", "[golden]") {
  TempDir tmp;
  // One worker, no communication: the run is compute only, so its length follows from the formula.
  json exp = modeled("allreduce_sgd", 1, 10);
  exp["variants"] = {
      {{"name", "base"}},
      {{"name", "window"},
       {"scenario", {{"stragglers", {{{"ranks", {0}}, {"factor", 3}, {"from_s", 0.25}, {"until_s", 0.55}}}}}}},
      {{"name", "whole"}, {"scenario", {{"stragglers", {{{"ranks", "all"}, {"factor", 2}}}}}}}};
  const Run r = run(tmp, "one", exp);
  INFO(r.cli.err);
  REQUIRE(r.cli.code == 0);
  const double base = simulated(r.out / "base");
  // 0.3 s of window do 0.1 s of work: 0.2 s more.
  CHECK(simulated(r.out / "window") == Approx(base + 0.3 * (1 - 1.0 / 3)).epsilon(1e-12));
  CHECK(simulated(r.out / "whole") == Approx(2 * base).epsilon(1e-12));

  // Two workers that never exchange (comm_period beyond the run): only the named rank's steps move.
  json two = modeled("easgd_async", 2, 10);
  two["algorithm"]["comm_period_steps"] = 1000;
  two["variants"] = {{{"name", "base"}},
                     {{"name", "slow"}, {"scenario", {{"stragglers", {{{"ranks", {2}}, {"factor", 2}}}}}}}};
  const Run t = run(tmp, "two", two);
  INFO(t.cli.err);
  REQUIRE(t.cli.code == 0);
  REQUIRE(!rows_of(t.out / "base", 1).empty());
  CHECK(rows_of(t.out / "base", 1) == rows_of(t.out / "slow", 1));
  CHECK(rows_of(t.out / "base", 2) != rows_of(t.out / "slow", 2));
  CHECK(file_json(t.out / "slow" / "config.resolved.json")["scenario"]["stragglers"][0]["resolved_ranks"] ==
        json::array({2}));
}

TEST_CASE("scenario: jitter is reproducible from its seed and changes with it; a fraction is drawn", "[golden]") {
  TempDir tmp;
  json exp = modeled("allreduce_sgd", 4, 20);
  exp["scenario"] = {{"jitter", {{{"ranks", "workers"}, {"model", "two_point"}, {"probability", 0.3}, {"factor", 4}}}},
                     {"stragglers", {{{"fraction", 0.5}, {"factor", 1.5}}}}};
  const Run a = run(tmp, "a", exp), b = run(tmp, "b", exp);
  INFO(a.cli.err);
  REQUIRE(a.cli.code == 0);
  REQUIRE(b.cli.code == 0);
  CHECK(slurp(a.out / "metrics.csv") == slurp(b.out / "metrics.csv"));
  CHECK(slurp(a.out / "summary.json") == slurp(b.out / "summary.json"));
  const json drawn = file_json(a.out / "config.resolved.json")["scenario"]["stragglers"][0]["resolved_ranks"];
  CHECK(drawn.size() == 2);

  exp["scenario"]["seed"] = 8;
  const Run c = run(tmp, "c", exp);
  REQUIRE(c.cli.code == 0);
  CHECK(simulated(c.out) != simulated(a.out));
  exp.erase("scenario");
  const Run none = run(tmp, "none", exp);
  REQUIRE(none.cli.code == 0);
  CHECK(simulated(none.out) < simulated(a.out));
}

TEST_CASE("scenario: a degraded link slows the run, in its window only; a failure stops allreduce SGD naming the rank",
          "[golden]") {
  TempDir tmp;
  json exp = modeled("allreduce_sgd", 4, 10);
  const json kWindow = {{"links", {{{"nic_of", {1}}, {"bandwidth_factor", 0.1}, {"from_s", 0.3}, {"until_s", 0.6}}}}};
  exp["variants"] = {
      {{"name", "base"}},
      {{"name", "slow_nic"}, {"scenario", {{"links", {{{"nic_of", {1}}, {"bandwidth_factor", 0.1}}}}}}},
      {{"name", "same_by_name"},
       {"scenario", {{"links", {{{"links", {"link-node-1_UP", "link-node-1_DOWN"}}, {"bandwidth_factor", 0.1}}}}}}},
      {{"name", "far"}, {"scenario", {{"links", {{{"nic_of", {1}}, {"latency_factor", 100}}}}}}},
      {{"name", "window"}, {"scenario", kWindow}},
      {{"name", "cut"},
       {"scenario", {{"links", {{{"nic_of", {1}}, {"down", true}, {"from_s", 0.3}, {"until_s", 0.6}}}}}}},
      {{"name", "base_collective"}, {"run", {{"fidelity", "collective"}}}},
      {{"name", "window_collective"}, {"scenario", kWindow}, {"run", {{"fidelity", "collective"}}}},
      {{"name", "window_budget"},
       {"scenario", kWindow},
       {"run", {{"fidelity", "collective"}, {"ring_flow_budget", 8}}}}};
  const Run r = run(tmp, "links", exp);
  INFO(r.cli.err);
  REQUIRE(r.cli.code == 0);
  const double base = simulated(r.out / "base");
  // The ring's every step crosses rank 1's NIC: a tenth of its bandwidth slows the run several times.
  CHECK(simulated(r.out / "slow_nic") > 3 * base);
  CHECK(simulated(r.out / "same_by_name") == simulated(r.out / "slow_nic"));
  CHECK(simulated(r.out / "far") > base);
  // In a window: slower than without, faster than for the whole run; on both fidelities (the collective one
  // then runs every ring step as flows), and byte-identical when run again.
  CHECK(simulated(r.out / "window") > base);
  CHECK(simulated(r.out / "window") < simulated(r.out / "slow_nic"));
  CHECK(simulated(r.out / "cut") > base + 0.2);  // the ring waits for the link to be back
  CHECK(simulated(r.out / "window_collective") > simulated(r.out / "base_collective"));
  // A ring above its flow budget is sampled, except with a window: every step runs as flows, and a warning says so.
  CHECK(simulated(r.out / "window_budget") == simulated(r.out / "window_collective"));
  CHECK_THAT(r.cli.err, Catch::Contains("warning: ") && Catch::Contains("/links: with a link window") &&
                            Catch::Contains("24 per allreduce of 4 ranks, above run.ring_flow_budget (8)"));
  const Run again = run(tmp, "again", exp);
  REQUIRE(again.cli.code == 0);
  for (const char* v : {"window", "cut", "window_collective"}) {
    INFO(v);
    CHECK(slurp(again.out / v / "metrics.csv") == slurp(r.out / v / "metrics.csv"));
    CHECK(simulated(again.out / v) == simulated(r.out / v));
  }

  exp.erase("variants");
  exp["scenario"] = {{"failures", {{{"rank", 3}, {"at_s", 0.5}}}}};
  const Run f = run(tmp, "fail", exp);
  CHECK(f.cli.code == 1);
  CHECK_THAT(f.cli.err,
             Catch::Contains("the run stopped at simulated time 0.5 s") && Catch::Contains("peer rank 3 failed"));
  CHECK_FALSE(fs::exists(f.out));

  // Async EASGD goes on without a failed worker.
  json easgd = modeled("easgd_async", 3, 10);
  easgd["scenario"] = {{"failures", {{{"rank", 2}, {"at_s", 0.5}}}}};
  const Run e = run(tmp, "easgd", easgd);
  INFO(e.cli.err);
  CHECK(e.cli.code == 0);
}

TEST_CASE("scenario: bad input is refused before the run, naming the key", "[golden]") {
  TempDir tmp;
  const json base = modeled("allreduce_sgd", 4, 5);
  const auto refused = [&](const json& scenario, const std::string& where, const std::string& extra = "") {
    json exp = base;
    exp["scenario"] = scenario;
    const Run r = run(tmp, "bad", exp, " --check" + extra);
    INFO(scenario.dump() << "\n" << r.cli.err);
    CHECK(r.cli.code == 2);
    CHECK_THAT(r.cli.err, Catch::Contains("bad.json:/scenario" + where));
  };
  refused({{"stragglers", {{{"ranks", {4}}, {"factor", 2}}}}}, "/stragglers/0/ranks/0");
  refused({{"stragglers", {{{"ranks", {1}}, {"fraction", 0.5}, {"factor", 2}}}}}, "/stragglers/0/ranks");
  refused({{"stragglers", {{{"ranks", {1}}, {"factor", 2}, {"from_s", 2}, {"until_s", 1}}}}}, "/stragglers/0/until_s");
  refused({{"stragglers", {{{"ranks", {1}}}}}}, "/stragglers/0/factor");
  refused({{"jitter", {{{"ranks", "all"}, {"model", "two_point"}, {"probability", 2}, {"factor", 2}}}}},
          "/jitter/0/probability");
  refused({{"links", {{{"links", {"no-such-link"}}, {"bandwidth_factor", 0.5}}}}}, "/links/0/links");
  refused({{"links", {{{"nic_of", {1}}, {"bandwidth_factor", 0.5}, {"from_s", 3}, {"until_s", 2}}}}},
          "/links/0/until_s");
  refused({{"links", {{{"nic_of", {1}}, {"down", true}, {"from_s", 3}}}}}, "/links/0/until_s");
  refused({{"links", {{{"nic_of", {1}}, {"down", true}, {"until_s", 3}, {"bandwidth_factor", 0.5}}}}},
          "/links/0/bandwidth_factor");
  refused({{"failures", {{{"rank", 1}, {"at_s", 1}}, {{"rank", 1}, {"at_s", 2}}}}}, "/failures/1/rank");
  refused({{"joins", {{{"rank", 1}, {"at_s", 1}}}}}, "/joins");
  refused({{"failures", {{{"rank", 1}, {"at_s", 1}}}}}, "/failures", " --set run.fidelity=collective");
  refused({{"links", {{{"nic_of", {1}}, {"bandwidth_factor", 0.5}, {"from_s", 1}, {"until_s", 2}}}}}, "/links",
          " --set run.fidelity=collective --set run.line_round_timing=nic");
  refused({{"stragglers", {{{"ranks", {1}}, {"factor", 2}}}}, {"typo", 1}}, "/typo");
  // A restart (issue 18): only an algorithm that restarts rank 0 (mpca's driver), only rank 0.
  refused({{"failures", {{{"rank", 0}, {"at_s", 1}, {"restart_after_s", 1}}}}}, "/failures/0/restart_after_s");
  json mpca = modeled("mpca", 4, 5);
  mpca["scenario"] = {{"failures", {{{"rank", 1}, {"at_s", 1}, {"restart_after_s", 1}}}}};
  Run m = run(tmp, "bad", mpca, " --check");
  CHECK(m.cli.code == 2);
  CHECK_THAT(m.cli.err, Catch::Contains("bad.json:/scenario/failures/0/restart_after_s"));
  mpca["scenario"] = {{"failures", {{{"rank", 0}, {"at_s", 1}, {"restart_after_s", 1}}}}};
  m = run(tmp, "good", mpca, " --check");
  INFO(m.cli.err);
  CHECK(m.cli.code == 0);

  // A scenario file, named relative to the experiment; its errors name the file.
  write_json(tmp / "slow.json", {{"name", "slow"}, {"stragglers", {{{"ranks", {1}}, {"factor", 2}}}}});
  json exp = base;
  exp["scenario"] = "slow.json";
  Run r = run(tmp, "byfile", exp, " --check");
  INFO(r.cli.err);
  CHECK(r.cli.code == 0);
  write_json(tmp / "slow.json", {{"stragglers", {{{"ranks", {1}}, {"factor", -2}}}}});
  r = run(tmp, "byfile", exp, " --check");
  CHECK(r.cli.code == 2);
  CHECK_THAT(r.cli.err, Catch::Contains("slow.json:/stragglers/0/factor"));
  exp["scenario"] = "missing.json";
  r = run(tmp, "byfile", exp, " --check");
  CHECK(r.cli.code == 2);
  CHECK_THAT(r.cli.err, Catch::Contains("byfile.json:/scenario") && Catch::Contains("missing.json"));
}

TEST_CASE("scenario: mpca's driver restarts from its backup, and summary.json lists what it cost", "[golden]") {
  TempDir tmp;
  json exp = modeled("mpca", 3, 20);
  exp["algorithm"]["checkpoint_every"] = 3;
  exp["scenario"] = {{"failures", {{{"rank", 0}, {"at_s", 0.7}, {"restart_after_s", 0.2}}}}};
  const Run r = run(tmp, "restart", exp);
  INFO(r.cli.err);
  REQUIRE(r.cli.code == 0);
  const json s = file_json(r.out / "summary.json");
  INFO(s.dump());
  CHECK(s["scenario"]["events"][0]["event"] == "failure");
  CHECK(s["scenario"]["events"][0]["restart_after_s"] == 0.2);
  CHECK(s["counters"]["mpca_driver_restarts"] == 1);
  int backups = 0, restarts = 0;
  double last = 0;
  for (const json& e : s["algorithm_events"]) {
    CHECK(e["at_s"].get<double>() >= last);  // in time order
    last = e["at_s"].get<double>();
    backups += e["event"] == "checkpoint" ? 1 : 0;
    if (e["event"] != "driver_restart") continue;
    ++restarts;
    CHECK(e["rank"] == 0);
    CHECK(e["crash_s"] == 0.7);
    CHECK(e["down_s"].get<double>() >= 0.2);
  }
  CHECK(restarts == 1);
  CHECK(backups == s["counters"]["mpca_checkpoints"]);
}
