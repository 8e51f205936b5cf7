// `dtsim sweep` end to end: a grid and listed points of an experiment, run two at a time; a sweep killed midway
// resumes and ends with a table byte-identical to an uninterrupted one; bad sweeps and foreign directories are
// refused before anything runs. (Under mpirun: tests/realexec/realexec_test.cpp.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {

// 3 bandwidths x 3 worker counts x 2 seeds of the tiny experiment, modeled numerics; and one listed point.
void write_sweep(const TempDir& tmp) {
  auto exp = tiny_experiment();
  exp.erase("variants");
  write_json(tmp / "tiny.json", exp);
  write_json(tmp / "sweep.json",
             {{"name", "bw"},
              {"experiment", "tiny.json"},
              {"set", {{"model.numerics", "modeled"}, {"data.modeled", true}, {"run", {{"steps", 40}}}}},
              {"grid",
               {{"platform.link_bandwidth_bps", {1e8, 1e9, 1e10}}, {"algorithm.workers", {2, 4, 8}}, {"seed", {1, 2}}}},
              {"points", {{{"algorithm.workers", 3}, {"algorithm.name", "easgd_async"}}}}});
}

int count_points(const fs::path& dir) {
  int n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 4 && name[0] == 'p') ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("dtsim sweep: a grid and points, two at a time; killed midway, it resumes to the same table", "[golden]") {
  TempDir tmp;
  write_sweep(tmp);
  const std::string sweep = (tmp / "sweep.json").string();
  auto r = run_dtsim("sweep " + sweep + " --jobs 2 --out " + (tmp / "whole").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string table = slurp(tmp / "whole" / "table.csv");
  // A header, 18 grid rows and the listed point; the varied keys first, in the grid's (alphabetical) order.
  REQUIRE(std::count(table.begin(), table.end(), '\n') == 20);
  REQUIRE(table.rfind("point,variant,algorithm.workers,platform.link_bandwidth_bps,seed,algorithm.name,", 0) == 0);
  REQUIRE_THAT(table, Contains("\np000,,2,100000000.0,1,,") && Contains("\np018,,3,,,easgd_async,"));
  const auto rows = nlohmann::json::parse(slurp(tmp / "whole" / "table.json"));
  REQUIRE(rows.size() == 19);
  REQUIRE(rows[17]["algorithm.workers"] == 8);
  REQUIRE(rows[17]["workers"] == 8);  // the point ran what it says
  REQUIRE(rows[0]["simulated_time_s"].get<double>() > rows[4]["simulated_time_s"].get<double>());  // 1e8 vs 1e10 b/s

  // Killed (SIGKILL) once a few points are done, then resumed.
  const fs::path killed = tmp / "killed";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string out = killed.string();
    execl(DTSIM_BINARY, "dtsim", "sweep", sweep.c_str(), "--jobs", "2", "--out", out.c_str(), nullptr);
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (count_points(killed) < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(count_points(killed) < 19);
  REQUIRE(!fs::exists(killed / "table.csv"));
  r = run_dtsim("sweep " + sweep + " --jobs 2 --out " + killed.string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.err, Contains("resuming"));
  REQUIRE(slurp(killed / "table.csv") == table);
  REQUIRE(slurp(killed / "table.json") == slurp(tmp / "whole" / "table.json"));
  for (const auto& e : fs::directory_iterator(killed)) {
    INFO(e.path());
    REQUIRE(e.path().filename().string().find("partial") == std::string::npos);
  }
  // Run again: nothing to do, the same table.
  r = run_dtsim("sweep " + sweep + " --out " + killed.string(), tmp / "");
  REQUIRE(r.code == 0);
  REQUIRE_THAT(r.err, Contains("19 points already done"));
  REQUIRE(slurp(killed / "table.csv") == table);
}

TEST_CASE("dtsim sweep: bad sweeps, a point with a bad value and foreign directories are input errors", "[golden]") {
  TempDir tmp;
  write_sweep(tmp);
  auto sweep = nlohmann::json::parse(slurp(tmp / "sweep.json"));
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"grid", {{"seed", nlohmann::json::array()}}}}, "sweep.json:/grid/seed"},
      {{{"grid", {{"variants", {1}}}}}, "sweep.json:/grid/variants"},
      {{{"grid", nullptr}, {"points", nullptr}}, "needs a grid or points"},
      {{{"experiment", "missing.json"}}, "missing.json"},
      {{{"gird", {{"seed", {1}}}}}, "sweep.json:/gird: unknown key"},
      {{{"points", {{{"algorithm.workers", -1}}}}}, "point p018"},
      {{{"plots", {{{"x", "seed"}, {"y", "simulated_time_s"}, {"series", "run.steps"}}}}}, "/plots/0/series"},
  };
  for (const auto& [patch, expected] : cases) {
    auto s = sweep;
    s.merge_patch(patch);
    write_json(tmp / "sweep.json", s);
    const auto r = run_dtsim("sweep " + (tmp / "sweep.json").string() + " --out " + (tmp / "out").string(), tmp / "");
    INFO(patch.dump() << ": " << r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Contains(expected));
    REQUIRE(!fs::exists(tmp / "out"));
  }
  // A directory that holds no sweep is never written into; one with another sweep needs --force.
  write_json(tmp / "sweep.json", sweep);
  fs::create_directories(tmp / "mine");
  write_json(tmp / "mine" / "notes.json", {{"keep", true}});
  auto r = run_dtsim("sweep " + (tmp / "sweep.json").string() + " --out " + (tmp / "mine").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("holds no dtsim sweep"));
  REQUIRE(fs::exists(tmp / "mine" / "notes.json"));

  sweep["grid"] = {{"seed", {1}}};
  sweep.erase("points");
  write_json(tmp / "one.json", sweep);
  r = run_dtsim("sweep " + (tmp / "one.json").string() + " --out " + (tmp / "s").string(), tmp / "");
  REQUIRE(r.code == 0);
  sweep["grid"] = {{"seed", {2}}};
  write_json(tmp / "one.json", sweep);
  r = run_dtsim("sweep " + (tmp / "one.json").string() + " --out " + (tmp / "s").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("holds a different sweep"));
  write_json(tmp / "s" / "mine.txt", {{"keep", true}});
  r = run_dtsim("sweep " + (tmp / "one.json").string() + " --force --out " + (tmp / "s").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(tmp / "s" / "mine.txt"));  // --force removed only what the old sweep wrote
  REQUIRE_THAT(slurp(tmp / "s" / "table.csv"), Contains("\np000,,2,"));
}
