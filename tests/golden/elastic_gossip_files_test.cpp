// The experiment files of experiments/elastic_gossip (papers/elastic_gossip.md §12, E0-E8) through the dtsim
// binary: every file and every variant reads and validates (`dtsim run --check`), and E1 is the thesis's grid.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::study_dir;

namespace {

// Every file of the given experiments validates, with one "ok" line per variant and nothing written.
void check_files(const std::vector<std::string>& stems) {
  for (const auto& stem : stems) {
    const auto f = study_dir("elastic_gossip") / (stem + ".json");
    TempDir tmp;
    const auto r = run_dtsim("run " + f.string() + " --check --out " + (tmp / "out").string(), tmp / "");
    INFO(f.string() << "\n" << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(slurp(f));
    const auto out = slurp(tmp / "stdout.txt");
    CHECK(static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')) == j["variants"].size());
    CHECK_FALSE(fs::exists(tmp / "out"));
  }
}

}  // namespace

TEST_CASE("elastic_gossip: the study has E0-E8, one file each", "[golden][elastic_gossip]") {
  std::set<std::string> tags;
  for (const auto& f : dts::test::study_files("elastic_gossip")) {
    const auto name = f.filename().string();
    tags.insert(name.substr(0, name.find('_')));
  }
  CHECK(tags == std::set<std::string>{"e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"});
}

TEST_CASE("elastic_gossip: the accuracy experiments validate (E0-E4)", "[golden][elastic_gossip]") {
  check_files({"e0_single_worker", "e1_main_grid", "e2_alpha_sweep", "e3_tau_vs_p", "e4_nc8_p2048"});
}

TEST_CASE("elastic_gossip: the CIFAR, timing and scale experiments validate (E5-E8)", "[golden][elastic_gossip]") {
  check_files({"e5_cifar", "e6_comm_cost", "e7_straggler", "e8_scale"});
}

TEST_CASE("elastic_gossip: E1 is the thesis's main grid at 40,000 updates", "[golden][elastic_gossip]") {
  // papers/elastic_gossip.md §10.1: AR-4, NC-4, EG-4 and GS-4 at p = 2^-3..2^-9, EG-8 and GS-8 at 2^-5..2^-9,
  // alpha 0.5, an effective batch of 128, Nesterov 0.001 / 0.99, the global barrier.
  const auto j = nlohmann::json::parse(slurp(study_dir("elastic_gossip") / "e1_main_grid.json"));
  CHECK(j["run"]["steps"] == 40000);
  CHECK(j["algorithm"]["alpha"] == 0.5);
  CHECK(j["algorithm"]["sync"] == "global");
  CHECK(j["algorithm"]["optimizer"]["kind"] == "nesterov");
  CHECK(j["algorithm"]["optimizer"]["lr"] == 0.001);
  CHECK(j["algorithm"]["optimizer"]["momentum"] == 0.99);
  std::map<std::string, int> cells;  // method and workers -> number of p values
  for (const auto& v : j["variants"]) {
    const auto& a = v["algorithm"];
    const int workers = a.value("workers", j["algorithm"]["workers"].get<int>());
    const int batch = a.value("batch_size", j["algorithm"]["batch_size"].get<int>());
    CHECK(workers * batch == 128);
    ++cells[a["name"].get<std::string>() + "/" + std::to_string(workers)];
  }
  const std::map<std::string, int> thesis{{"allreduce_sgd/4", 1}, {"no_comm/4", 1},        {"elastic_gossip/4", 4},
                                          {"gossip_pull/4", 4},   {"elastic_gossip/8", 3}, {"gossip_pull/8", 3}};
  CHECK(cells == thesis);
}
