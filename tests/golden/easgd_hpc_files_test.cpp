// The experiment files of experiments/easgd_hpc (papers/easgd_hpc.md §15) through the dtsim binary: every
// file and every variant reads and validates (`dtsim run --check`), the KNL capacity check refuses 32 groups,
// and a shortened run of the weak-scaling study (H6) scales as weak scaling must.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"
#include "tests/golden/study_check.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::study_dir;
using dts::test::study_files;
using dts::test::write_json;

TEST_CASE("easgd_hpc: every experiment file and every variant validates", "[golden][easgd_hpc]") {
  // H2/H3, H4..H10 and H9's base (H1 lives with the time-breakdown feature)
  REQUIRE(study_files("easgd_hpc").size() >= 9);
  dts::test::check_study_files("easgd_hpc", 'h');
}

TEST_CASE("easgd_hpc: --check fails on a bad key, and 32 KNL groups exceed MCDRAM", "[golden][easgd_hpc]") {
  TempDir tmp;
  const auto h6 = (study_dir("easgd_hpc") / "h6_weak_scaling.json").string();
  auto r = run_dtsim("run " + h6 + " --check --set algorithm.elastic_alfa=0.1", tmp / "");
  CHECK(r.code == 2);
  CHECK(r.err.find("elastic_alfa") != std::string::npos);

  // papers/easgd_hpc.md §5.8: 16 x (AlexNet 249 MB + Cifar) fits 16 GB of MCDRAM, 32 copies do not.
  const auto h5 = (study_dir("easgd_hpc") / "h5_knl_partition.json").string();
  r = run_dtsim("run " + h5 +
                    " --check --set variants=null --set platform.chip_partition.groups=32"
                    " --set algorithm.workers=32",
                tmp / "");
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("chip_partition/groups") != std::string::npos);
  r = run_dtsim("run " + h5 +
                    " --check --set variants=null --set platform.chip_partition.groups=16"
                    " --set algorithm.workers=16",
                tmp / "");
  CHECK(r.code == 0);
}

TEST_CASE("easgd_hpc: H6 weak scaling, shortened: efficiency T(1)/T(N) <= 1 and falling with N",
          "[golden][easgd_hpc]") {
  /* In details:
   *   o h6_weak_scaling.json as shipped (Cori KNL dragonfly, Sync EASGD, GoogLeNet at 5.11 s per iteration),
   *     cut to 3 iterations and to 1, 4, 16 and 64 nodes
   * Expectations
   *   o every iteration costs the same compute on every node, and more nodes add tree levels: T(N) >= T(1),
   *     so the efficiency is at most 1 and does not rise with N; at 64 nodes it is below 1
   *   o the per-node compute alone bounds T(1) from below: 3 x 5.11 s
   */
  TempDir tmp;
  auto j = nlohmann::json::parse(slurp(study_dir("easgd_hpc") / "h6_weak_scaling.json"));
  j["platform"] = (study_dir("easgd_hpc") / j["platform"].get<std::string>()).lexically_normal().string();
  j["run"]["steps"] = 3;
  nlohmann::json keep = nlohmann::json::array();
  for (const auto& v : j["variants"]) {
    const auto n = v["name"].get<std::string>();
    if (n == "googlenet_n1" || n == "googlenet_n4" || n == "googlenet_n16" || n == "googlenet_n64") keep.push_back(v);
  }
  REQUIRE(keep.size() == 4);
  j["variants"] = keep;
  write_json(tmp / "h6.json", j);
  const auto r = run_dtsim("run " + (tmp / "h6.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::vector<double> t;
  for (const char* n : {"googlenet_n1", "googlenet_n4", "googlenet_n16", "googlenet_n64"}) {
    t.push_back(nlohmann::json::parse(slurp(tmp / "out" / n / "summary.json"))["simulated_time_s"].get<double>());
  }
  CHECK(t[0] >= 3 * 5.11);
  double previous = 1.0;
  for (double tn : t) {
    const double efficiency = t[0] / tn;
    CHECK(efficiency <= 1.0);
    CHECK(efficiency <= previous);
    previous = efficiency;
  }
  CHECK(t[0] / t[3] < 1.0);
}
