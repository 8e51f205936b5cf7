// The platform key master_device (sim/platform.hpp): where every rank has its own single-device node, the hosts of
// the ranks before the workers (MPCA's driver, a parameter server) get this device model and are CPU hosts, while
// the workers keep `device`; without the key, or without such ranks, every host is a `device` host as before.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "core/errors.hpp"
#include "sim/time_account.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string platforms_dir() {
  const char* src = std::getenv("DTS_SOURCE_DIR");
  return (fs::path(src ? src : ".") / "platforms").string();
}

dts::sim::PlatformSpec spec_of(json j) {
  if (!j.contains("device")) j["device"] = {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}};
  return dts::sim::read_platform(j, "p.json", "", platforms_dir());
}

// Each rank's host: its name, the device model's name and speed, the host's SimGrid speed, and where its updates
// are accounted.
json probe(const dts::sim::PlatformSpec& spec, int ranks, int workers) {
  return dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    json out = json::array();
    for (auto* h : dts::sim::build_platform(spec, ranks, workers)) {
      const dts::sim::Device& d = dts::sim::device_of_host(spec, h);
      out.push_back({{"host", h->get_name()},
                     {"device", d.name},
                     {"peak_flops", d.peak_flops},
                     {"speed", h->get_speed()},
                     {"updates", dts::sim::to_string(dts::sim::update_category(h))}});
    }
    return out;
  });
}

const json kXeon = {{"peak_flops", 2.56e11}, {"mem_bw_Bps", 5.12e10}, {"cores", 8}, {"update_efficiency", 0.25}};

}  // namespace

TEST_CASE("sim::platform master_device: the driver's host gets it, the workers keep their device", "[sim]") {
  /* In details:
   *   o a star (hosts 0: one node per rank), device 1 TFLOP/s; master_device an inline 256 GFLOP/s CPU
   *   o 1 driver and 3 workers (4 ranks, 3 workers); then 4 workers alone; then the same without the key
   * Expectations
   *   o rank 0's host: the master device's model and speed, a CPU host (its updates are cpu_update); ranks 1-3:
   *     the device's, gpu_update
   *   o no rank before the workers, or no key: every host the device's, as before the key
   */
  const auto spec = spec_of({{"master_device", kXeon}});
  REQUIRE(spec.master_device);
  CHECK(spec.master_device->efficiency_of(dts::sim::WorkKind::kUpdate) == 0.25);
  const json out = probe(spec, 4, 3);
  REQUIRE(out.is_array());
  CHECK(out[0]["peak_flops"] == 2.56e11);
  CHECK(out[0]["speed"] == 2.56e11);
  CHECK(out[0]["updates"] == "cpu_update");
  for (int r = 1; r < 4; ++r) {
    INFO("rank " << r);
    CHECK(out[r]["peak_flops"] == 1e12);
    CHECK(out[r]["speed"] == 1e12);
    CHECK(out[r]["updates"] == "gpu_update");
  }
  CHECK(out[1]["host"] == "node-1");

  for (const json& all_workers : {probe(spec, 4, 4), probe(spec_of(json::object()), 4, 3)}) {
    for (const auto& h : all_workers) {
      CHECK(h["peak_flops"] == 1e12);
      CHECK(h["updates"] == "gpu_update");
    }
  }
}

TEST_CASE("sim::platform master_device: a catalog name, resolved in the config; the MPCA cluster's driver CPU",
          "[sim]") {
  const auto spec = spec_of({{"master_device", "xeon_e5_2650"}, {"hosts", 0}});
  REQUIRE(spec.master_device);
  CHECK(spec.master_device->name == "xeon_e5_2650");
  CHECK(spec.resolved["master_device_resolved"]["mem_bw_Bps"] == 51.2e9);

  const auto mpca = dts::sim::load_platform_file(platforms_dir() + "/titanx_1gbe.json");
  REQUIRE(mpca.master_device);
  const json out = probe(mpca, 9, 8);
  CHECK(out[0]["device"] == "xeon_e5_2650");
  CHECK(out[0]["updates"] == "cpu_update");
  for (int r = 1; r < 9; ++r) CHECK(out[r]["device"] == "nvidia_titanx_maxwell");
}

TEST_CASE("sim::platform master_device: refused where a master has no node of its own, naming the key", "[sim]") {
  const json node = {{"cpu", kXeon}, {"devices", 2}};
  for (const json& bad : {json{{"node", node}, {"master_device", kXeon}},
                          json{{"chip_partition", {{"groups", 2}}}, {"master_device", kXeon}},
                          json{{"machine_cores", 2}, {"master_device", kXeon}}}) {
    INFO(bad.dump());
    REQUIRE_THROWS_AS(spec_of(bad), dts::ConfigError);
    REQUIRE_THROWS_WITH(spec_of(bad), Catch::Contains("p.json:/master_device"));
  }
  REQUIRE_THROWS_WITH(spec_of({{"master_device", "no_such_device"}}), Catch::Contains("/master_device"));
}
