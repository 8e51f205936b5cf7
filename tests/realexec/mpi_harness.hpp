// Running dtsim under mpirun as a user would, and comparing an MPI job's result directory with the simulator's,
// for the tests in tests/realexec.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/golden/cli_harness.hpp"

namespace dts::test {

// `env mpirun -np N dtsim ARGS`, its exit code and stderr; stdout is left in dir/stdout.txt.
inline CliResult mpirun(int np, const std::string& args, const std::filesystem::path& dir,
                        const std::string& env = "") {
  const std::string cmd = env + " " + DTS_MPIEXEC + " --oversubscribe --mca mpi_yield_when_idle 1 --timeout 120 -np " +
                          std::to_string(np) + " " + DTSIM_BINARY + " " + args + " > " + (dir / "stdout.txt").string() +
                          " 2> " + (dir / "stderr.txt").string();
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "stderr.txt")};
}

// `env mpirun -np N dtsim run --backend mpi ARGS`.
inline CliResult mpirun_dtsim(int np, const std::string& args, const std::filesystem::path& dir,
                              const std::string& env = "") {
  return mpirun(np, "run --backend mpi " + args, dir, env);
}

inline nlohmann::json summary_of(const std::filesystem::path& dir) {
  return nlohmann::json::parse(slurp(dir / "summary.json"));
}

// Recorder::observe's row of the last step on MPI (m) and on the simulator (s): the same mean model (sums of a
// few floats in doubles are exact); the consensus distance sums squared norms in another order on MPI.
inline void require_same_aggregate(const nlohmann::json& m, const nlohmann::json& s) {
  REQUIRE(s.contains("aggregate"));
  REQUIRE(m["aggregate"]["step"] == s["aggregate"]["step"]);
  REQUIRE(m["aggregate"]["test_loss"] == s["aggregate"]["test_loss"]);
  REQUIRE(m["aggregate"]["test_accuracy"] == s["aggregate"]["test_accuracy"]);
  REQUIRE(m["aggregate"]["consensus_distance"].get<double>() ==
          Approx(s["aggregate"]["consensus_distance"].get<double>()).epsilon(1e-9));
}

// (rank, step, loss, test_accuracy, test_loss) of every metrics.csv row, without times and byte counters.
inline std::multiset<std::string> rows_without_time(const std::filesystem::path& dir) {
  std::multiset<std::string> rows;
  std::istringstream in(slurp(dir / "metrics.csv"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    cells.resize(11);
    rows.insert(cells[1] + "," + cells[2] + "," + cells[3] + "," + cells[4] + "," + cells[5] + "," + cells[10]);
  }
  return rows;
}

}  // namespace dts::test
