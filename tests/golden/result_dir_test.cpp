// Result directories through the dtsim binary: dtsim never deletes or replaces what it did not create
// (--out ., an existing directory, names that are not plain), --force replaces only a dtsim result, and a
// run killed with SIGKILL leaves no process, and no partial directory once the next run starts.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <thread>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {

// Every file under `dir` with its contents, to show that nothing changed.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    files[fs::relative(e.path(), dir).string()] = e.is_regular_file() ? slurp(e.path()) : "<dir>";
  }
  return files;
}

// A scratch directory holding the experiment and a file of the user's.
struct Scratch {
  TempDir tmp;
  fs::path home = tmp / "home";
  Scratch() {
    fs::create_directories(home / "work");
    std::ofstream(home / "notes.txt") << "a user's file\n";
    std::ofstream(home / "work" / "data.txt") << "more of the user's work\n";
    auto exp = tiny_experiment();
    exp["run"]["epochs"] = 1;
    write_json(home / "tiny.json", exp);
  }
  // dtsim run tiny.json ARGS, from inside the scratch directory.
  dts::test::CliResult run(const std::string& args) const {
    return run_dtsim("run tiny.json " + args, tmp / "", "cd " + home.string() + " && ");
  }
};

}  // namespace

TEST_CASE("dtsim run: --out naming the current directory, an ancestor or a directory not its own is refused",
          "[golden]") {
  Scratch s;
  const auto before = contents(s.home);
  for (const std::string& out :
       std::vector<std::string>{".", "./", "..", "work/..", s.home.string(), "work", "/", "notes.txt"}) {
    for (const std::string force : {"", " --force"}) {
      INFO("--out " << out << force);
      const auto r = s.run("--out " + out + force);
      INFO(r.err);
      REQUIRE(r.code == 2);
      REQUIRE_THAT(r.err, Catch::Contains("--out"));
      REQUIRE(contents(s.home) == before);
    }
  }
  // A path through a file is an input error too, and --check refuses what a run would refuse.
  REQUIRE(s.run("--out notes.txt/out").code == 2);
  REQUIRE(s.run("--out work --check").code == 2);
  REQUIRE(contents(s.home) == before);
}

TEST_CASE("dtsim run: names that are not plain directory names are refused before anything is written", "[golden]") {
  Scratch s;
  const auto before = contents(s.home);
  for (const std::string name : {"..", ".", "", ".hidden", "a/b", "../x", "/tmp"}) {
    INFO("name \"" << name << "\"");
    // The experiment's name gives the default result directory results/NAME.
    auto r = s.run("--set 'name=\"" + name + "\"'");
    INFO(r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Catch::Contains("/name"));
    // A variant's name gives its subdirectory.
    r = s.run("--out out --set 'variants=[{\"name\": \"" + name + "\"}]'");
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Catch::Contains("/variants/0/name"));
    REQUIRE(contents(s.home) == before);
  }
}

TEST_CASE("dtsim run: an existing result is replaced only with --force", "[golden]") {
  Scratch s;
  REQUIRE(s.run("--out out").code == 0);
  const auto first = contents(s.home / "out");
  REQUIRE(first.count("easgd_async/summary.json") == 1);
  std::ofstream(s.home / "out" / "plot.png") << "a plot beside the variants";

  auto r = s.run("--out out");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains("exists") && Catch::Contains("--force"));
  REQUIRE(fs::exists(s.home / "out" / "plot.png"));

  r = s.run("--out out --force");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(contents(s.home / "out") == first);  // the same result again, and only it
  for (const auto& e : fs::directory_iterator(s.home)) {
    REQUIRE(e.path().filename().string().find("out.") == std::string::npos);  // no partial or old copy
  }
}

namespace {

// The pids of the processes whose command line holds `needle`.
std::vector<int> processes_with(const std::string& needle) {
  std::vector<int> pids;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = slurp(e.path() / "cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

}  // namespace

TEST_CASE("dtsim run: SIGKILL mid-variant leaves no process, and the next run no partial directory", "[golden]") {
  Scratch s;
  const std::string out = (s.home / "killed_out").string();
  auto exp = tiny_experiment();
  exp["run"]["epochs"] = 60;  // long enough to be killed in the middle of a variant, even on a fast machine
  write_json(s.home / "tiny.json", exp);

  const pid_t parent = fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {  // dtsim run tiny.json --out OUT, from the scratch directory, output discarded
    if (chdir(s.home.c_str()) != 0 || !std::freopen("/dev/null", "w", stdout) ||
        !std::freopen("/dev/null", "w", stderr))
      _exit(127);
    execl(DTSIM_BINARY, DTSIM_BINARY, "run", "tiny.json", "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the child that runs the first variant: a second process with the same command line, once the
  // partial directory exists (the checks before it run in a child of their own).
  const fs::path partial = out + ".partial-" + std::to_string(parent);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((!fs::exists(partial) || processes_with(out).size() < 2) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(fs::exists(partial));
  REQUIRE(processes_with(out).size() == 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(processes_with(out).size() == 2);  // still in the first variant
  REQUIRE(kill(parent, SIGKILL) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  REQUIRE(processes_with(out).empty());  // a zombie's command line is empty
  REQUIRE(fs::exists(partial));          // what SIGKILL leaves behind

  // The next run removes it, though its owner is not reaped yet (a zombie, as a sweep's point is until init
  // reaps it), and gives what a run that was never interrupted gives.
  auto r = s.run("--out killed_out --set run.epochs=2");  // shorter, to keep the test quick
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(waitpid(parent, nullptr, 0) == parent);
  r = s.run("--out clean_out --set run.epochs=2");
  REQUIRE(r.code == 0);
  for (const auto& e : fs::directory_iterator(s.home)) {
    REQUIRE(e.path().filename().string().find(".partial-") == std::string::npos);
  }
  for (const char* variant : {"allreduce_sgd", "easgd_async"}) {
    for (const char* file : {"metrics.csv", "summary.json"}) {
      INFO(variant << "/" << file);
      REQUIRE(slurp(s.home / "killed_out" / variant / file) == slurp(s.home / "clean_out" / variant / file));
    }
  }
}
