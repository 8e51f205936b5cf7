// Platforms: a raw SimGrid XML file with one link between two hosts, read through a platform JSON, gives
// exactly the latency-bandwidth time once the correction factors are pinned; JSON errors name their key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "tests/sim/sim_harness.hpp"

namespace fs = std::filesystem;

namespace {
fs::path temp_dir() {
  auto d = fs::temp_directory_path() / ("dts_platform_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("sim::platform: one message over the one link of an XML platform", "[sim]") {
  /* In details:
   *   o two hosts joined by a single 100 Mb/s, 200 us link (SHARED, as the DTD default); LV08 with latency
   *     and bandwidth factors pinned to 1 and no cross-traffic
   * Expectations
   *   o a 1 MB message arrives at 200e-6 + 1e6 / 12.5e6 = 0.0802 s
   */
  const fs::path dir = temp_dir();
  std::ofstream(dir / "two.xml") << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <host id="b-host" speed="1Gf"/>
    <host id="a-host" speed="1Gf"/>
    <link id="wire" bandwidth="100Mbps" latency="200us"/>
    <route src="a-host" dst="b-host"><link_ctn id="wire"/></route>
  </zone>
</platform>
)";
  const nlohmann::json pj = {
      {"topology", "xml"},
      {"xml", "two.xml"},
      {"device", {{"peak_flops", 1e9}, {"mem_bw_Bps", 1e9}}},
      {"simgrid_config",
       {{"network/latency-factor", "1"}, {"network/bandwidth-factor", "1"}, {"network/crosstraffic", "0"}}}};
  const auto spec = dts::sim::read_platform(pj, "p.json", "", dir.string());
  const auto out = dts::test::simulate(spec, 2, [](auto& comm, auto&, auto& o) {
    dts::Vec buf(250'000, false);
    if (comm.rank() == 0) {
      comm.send(1, 0, buf);
    } else {
      comm.recv(0, 0, buf);
    }
    o["t"] = comm.now_s();
  });
  fs::remove_all(dir);
  REQUIRE(!out.contains("error"));
  // Ranks take hosts in name order: rank 0 is a-host.
  REQUIRE(out["rank"][1]["t"].get<double>() == Approx(200e-6 + 1e6 / 12.5e6).epsilon(1e-9));
}

TEST_CASE("sim::platform: bad platform JSON names the key", "[sim]") {
  const nlohmann::json bad = {{"device", {{"peak_flops", 1e9}, {"mem_bw_Bps", 1e9}}}, {"link_bandwith_bps", 1e9}};
  REQUIRE_THROWS_WITH(dts::sim::read_platform(bad, "p.json", "", "."),
                      Catch::Contains("p.json:/link_bandwith_bps") && Catch::Contains("unknown key"));
  const nlohmann::json neg = {{"device", {{"peak_flops", -1}, {"mem_bw_Bps", 1e9}}}};
  REQUIRE_THROWS_WITH(dts::sim::read_platform(neg, "p.json", "", "."), Catch::Contains("/device/peak_flops"));
  const nlohmann::json unknown_device = {{"device", "no_such_gpu"}, {"device_catalog", "nowhere.json"}};
  REQUIRE_THROWS_AS(dts::sim::read_platform(unknown_device, "p.json", "", "."), dts::InputError);
}
