// Scenarios on the MPI backend (realexec/mpi_scenario.hpp), under mpirun as a user runs them: a straggler
// sleeps so that its compute takes `factor` times its measured time, and every step of a synchronous run
// waits for it; a rank's scenario failure is modeled (the rank stops its algorithm and announces it), so an
// algorithm that cannot go on without it ends the job with exit 1 naming that rank, leaving no result directory
// (tests/realexec/mpca_mpi_test.cpp has one that goes on); link changes are an input error (exit 2) naming the key,
// before anything runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "algorithms/api/scenario.hpp"
#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/realexec/mpi_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::mpirun_dtsim;
using dts::test::slurp;
using dts::test::write_json;

namespace {

bool leaves_nothing(const TempDir& tmp, const std::string& prefix) {
  for (const auto& e : fs::directory_iterator(tmp / "")) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) return false;
  }
  return true;
}

// tiny_experiment() without its variants: allreduce_sgd, 4 workers, logreg; `scenario` added.
fs::path write_tiny(const TempDir& tmp, const nlohmann::json& scenario) {
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["scenario"] = scenario;
  write_json(tmp / "tiny.json", exp);
  return tmp / "tiny.json";
}

// Rank 0's wall time of each step k (0-based: from its step row k to row k + 1) of a result directory.
std::map<long, double> step_durations(const fs::path& dir) {
  std::map<long, double> at;  // step row -> time_s
  std::istringstream in(slurp(dir / "metrics.csv"));
  std::string line;
  std::getline(in, line);  // time_s,rank,step,loss,...
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) c.push_back(x);
    if (c.size() > 2 && c[1] == "0" && !c[2].empty()) at[std::stol(c[2])] = std::stod(c[0]);
  }
  std::map<long, double> d;
  for (auto it = at.begin(); it != at.end() && std::next(it) != at.end(); ++it)
    d[it->first] = std::next(it)->second - it->second;
  return d;
}

double median(std::vector<double> v) {
  REQUIRE(v.size() >= 4);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("realexec: a 4x straggler on one of 4 ranks slows the steps of allreduce SGD it names, as the simulator's",
          "[mpi]") {
  /* Rank 2 computes 4x slower in the steps that two-point jitter (probability 1/2, factor 4) picks from the
   * seed; allreduce_sgd waits for every rank at each step, so a picked step takes T + 3 c_2 (c_2: rank 2's
   * measured compute, most of the step T here) and the others T. 4x rather than 2x: with the 2 cores of the
   * machine busy, 2x measured 1.2-1.8 against 1.09 without the sleep, too close to tell apart reliably. Picked and
   * unpicked steps alternate within one run, so the load of this shared machine weighs on both alike. The steps picked
   * are those of Scenario::jitter_factor, which the simulator charges: the same factors on both backends. */
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["model"]["name"] = "cifar10_quick";  // much compute for few parameters: compute is most of a step
  exp["data"] = {{"name", "synthetic"}, {"train_samples", 2048}, {"test_samples", 64},
                 {"channels", 3},       {"height", 32},          {"width", 32}};
  exp["algorithm"]["batch_size"] = 32;
  exp["run"] = {{"steps", 16}, {"eval_every_steps", 0}, {"log_every_steps", 1}};
  exp["scenario"] = {{"seed", 10},
                     {"jitter", {{{"ranks", {2}}, {"model", "two_point"}, {"probability", 0.5}, {"factor", 4}}}}};
  write_json(tmp / "exp.json", exp);
  const auto r = mpirun_dtsim(4, (tmp / "exp.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);

  dts::Scenario same;
  same.seed = 10;
  same.jitter.push_back({{2}, dts::Jitter::Model::kTwoPoint, 0, 0.5, 4});
  std::vector<double> slow, fast;
  for (const auto& [k, d] : step_durations(tmp / "out")) {
    if (k < 2) continue;  // the first steps warm the kernels up
    (same.jitter_factor(2, k) == 4 ? slow : fast).push_back(d);
  }
  const double ts = median(slow), tf = median(fast);
  INFO("s per step: " << tf << " (" << fast.size() << " steps at full speed), " << ts << " (" << slow.size()
                      << " steps with rank 2 at 4x)");
  REQUIRE(ts > 1.5 * tf);  // the compute is most of a step
  REQUIRE(ts < 5.0 * tf);  // and a slowed step is three more computes of rank 2 at most, not more
}

TEST_CASE("realexec: a scenario failure stops allreduce SGD with exit 1, naming the failed rank, and leaves no result",
          "[mpi]") {
  /* Rank 2 fails 0.05 s into a run of many steps: at its next compute or comm call it stops its algorithm and tells
   * the others, without an error of its own. Its neighbours in the ring allreduce see their operations with it
   * complete with kPeerFailed; allreduce_sgd cannot go on without it, so a survivor's error (PeerFailed) ends the
   * job, as on the simulator ("Behaviour under scenarios": stops). */
  TempDir tmp;
  const fs::path exp = write_tiny(tmp, {{"failures", {{{"rank", 2}, {"at_s", 0.05}}}}});
  const auto r = mpirun_dtsim(
      4, exp.string() + " --set run.epochs=null --set run.steps=100000 --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 1);
  REQUIRE_THAT(r.err, Catch::Contains(": error: the run stopped at wall time ") &&
                          Catch::Contains(" s: peer rank 2 failed") && !Catch::Contains("rank 2: error"));
  REQUIRE(leaves_nothing(tmp, "out"));
}

TEST_CASE("realexec: link changes are an input error on MPI, naming the key, before anything runs", "[mpi]") {
  TempDir tmp;
  const fs::path exp = write_tiny(tmp, {{"links", {{{"nic_of", {1}}, {"bandwidth_factor", 0.5}}}}});
  const std::string key = "input error: " + exp.string() + ":/scenario/links: link changes are a simulator notion";
  auto r = mpirun_dtsim(4, exp.string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains(key));
  REQUIRE(leaves_nothing(tmp, "out"));
  r = dts::test::run_dtsim("run --backend mpi --check " + exp.string() + " --out " + (tmp / "out").string(), tmp / "");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Catch::Contains(key));
}
