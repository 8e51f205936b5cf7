// Platform topologies: multi-device nodes (CPU + devices behind PCIe switches), fat tree and dragonfly
// clusters, rank placement, KNL chip partitioning and its capacity check, link presets, and every shipped
// platform file. Routes are read from SimGrid (Host::route_to); times come from hand-computed alpha-beta sums
// (CM02 without cross-traffic: every factor is 1).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "core/errors.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace fs = std::filesystem;
namespace sg4 = simgrid::s4u;
using nlohmann::json;

namespace {

std::string platforms_dir() {
  const char* src = std::getenv("DTS_SOURCE_DIR");
  return (fs::path(src ? src : ".") / "platforms").string();
}

dts::sim::PlatformSpec spec_of(json j) {
  j["network_model"] = "CM02";
  j["simgrid_config"] = {{"network/crosstraffic", "0"}};
  if (!j.contains("device")) j["device"] = {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}};
  return dts::sim::read_platform(j, "p.json", "", platforms_dir());
}

// Builds the platform in a child process; returns the host of each rank, the host count, and for each pair of
// host names the route's link names and latency.
json probe(const dts::sim::PlatformSpec& spec, int ranks, int workers,
           const std::vector<std::pair<std::string, std::string>>& pairs = {}) {
  return dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    const auto hosts = dts::sim::build_platform(spec, ranks, workers);
    json out;
    for (auto* h : hosts) out["hosts"].push_back(h->get_name());
    for (auto* h : hosts) out["speed"].push_back(dts::sim::device_of_host(spec, h).peak_flops);
    out["count"] = engine->get_host_count();
    for (const auto& [a, b] : pairs) {
      std::vector<sg4::Link*> links;
      double lat = 0;
      sg4::Host::by_name(a)->route_to(sg4::Host::by_name(b), links, &lat);
      json r = {{"lat", lat}, {"links", json::array()}, {"bw", json::array()}};
      for (auto* l : links) {
        r["links"].push_back(l->get_name());
        r["bw"].push_back(l->get_bandwidth());
      }
      out["routes"].push_back(r);
    }
    return out;
  });
}

bool any_contains(const json& links, const std::string& part) {
  for (const auto& l : links) {
    if (l.get<std::string>().find(part) != std::string::npos) return true;
  }
  return false;
}

const json kNode = {{"cpu", {{"peak_flops", 2e11}, {"mem_bw_Bps", 5e10}, {"cores", 8}}},
                    {"devices", 4},
                    {"pcie_switches", 2},
                    {"pcie_bandwidth_bps", 96e9},
                    {"pcie_latency_s", 1e-6}};

}  // namespace

TEST_CASE("sim::platform: multi-device nodes route CPU-GPU over PCIe and GPU-GPU through their switch", "[sim]") {
  /* In details:
   *   o a star of 3 nodes, each a CPU and 4 devices on 2 PCIe switches (12 GB/s, 1 us per link); NIC links
   *     5 GB/s, 0.35 us
   * Expectations
   *   o 3 x 5 = 15 hosts
   *   o CPU -> dev-0: the switch uplink and the device's link, 2 us; dev-0 -> dev-1 (same switch): the two
   *     device links only; dev-0 -> dev-2 (other switch): through both uplinks; dev-0 of node 0 -> dev-3 of
   *     node 2: PCIe, both NICs, PCIe: 4 us + 0.7 us
   */
  const auto spec = spec_of({{"hosts", 3}, {"node", kNode}, {"link_bandwidth_bps", 40e9}, {"link_latency_s", 0.35e-6}});
  const auto out = probe(spec, 1, 1,
                         {{"node-0-cpu", "node-0-dev-0"},
                          {"node-0-dev-0", "node-0-dev-1"},
                          {"node-0-dev-0", "node-0-dev-2"},
                          {"node-0-dev-0", "node-2-dev-3"}});
  REQUIRE(!out.contains("error"));
  CHECK(out["count"] == 15);
  const auto& r = out["routes"];
  CHECK(r[0]["links"] == json({"node-0-pcie-up-0_DOWN", "node-0-pcie-dev-0_DOWN"}));
  CHECK(r[0]["lat"].get<double>() == Approx(2e-6));
  CHECK(r[1]["links"] == json({"node-0-pcie-dev-0_UP", "node-0-pcie-dev-1_DOWN"}));
  CHECK(r[2]["links"] ==
        json({"node-0-pcie-dev-0_UP", "node-0-pcie-up-0_UP", "node-0-pcie-up-1_DOWN", "node-0-pcie-dev-2_DOWN"}));
  CHECK(r[3]["links"].size() == 6);
  CHECK(any_contains(r[3]["links"], "link-node-0_UP"));
  CHECK(any_contains(r[3]["links"], "link-node-2_DOWN"));
  CHECK(r[3]["lat"].get<double>() == Approx(4e-6 + 0.7e-6));
}

TEST_CASE("sim::platform: a CPU-GPU transfer takes PCIe latency + size / bandwidth", "[sim]") {
  // one_per_host: rank 0 on the CPU, ranks 1.. on the devices. 12 MB over 12 GB/s links, 2 x 1 us.
  json j = {{"hosts", 1}, {"node", kNode}, {"placement", {{"ranks", "one_per_host"}}}};
  const auto out = dts::test::simulate(spec_of(j), 3, [](auto& comm, auto&, auto& o) {
    dts::Vec buf(3'000'000, false);
    if (comm.rank() == 0) comm.send(1, 0, buf);
    if (comm.rank() == 1) {
      comm.recv(0, 0, buf);
      o["cpu_gpu"] = comm.now_s();
      comm.send(2, 1, buf);  // GPU -> GPU under the same switch: two device links, same figures
    }
    if (comm.rank() == 2) {
      comm.recv(1, 1, buf);
      o["gpu_gpu"] = comm.now_s();
    }
  });
  REQUIRE(!out.contains("error"));
  const double hop = 2e-6 + 12e6 / 12e9;
  CHECK(out["rank"][1]["cpu_gpu"].get<double>() == Approx(hop).epsilon(1e-9));
  CHECK(out["rank"][2]["gpu_gpu"].get<double>() == Approx(2 * hop).epsilon(1e-9));
}

TEST_CASE("sim::platform: placement puts the master where the spec says", "[sim]") {
  json j = {{"hosts", 2}, {"node", kNode}};
  // Default on multi-device nodes: workers on devices, the master (rank 0 of 5 workers + 1) on node 0's CPU.
  auto out = probe(spec_of(j), 6, 5);
  REQUIRE(!out.contains("error"));
  CHECK(out["hosts"] ==
        json({"node-0-cpu", "node-0-dev-0", "node-0-dev-1", "node-0-dev-2", "node-0-dev-3", "node-1-dev-0"}));
  CHECK(out["speed"][0] == 2e11);  // the CPU's device model
  CHECK(out["speed"][1] == 1e12);
  j["placement"] = {{"master", "device0"}};
  out = probe(spec_of(j), 6, 5);
  CHECK(out["hosts"][0] == "node-0-dev-0");
  CHECK(out["hosts"][1] == "node-0-dev-0");
  // No master (allreduce): workers only.
  out = probe(spec_of(j), 4, 4);
  CHECK(out["hosts"] == json({"node-0-dev-0", "node-0-dev-1", "node-0-dev-2", "node-0-dev-3"}));
  // Too many workers for the devices.
  out = probe(spec_of(j), 10, 9);
  CHECK(out["error"].get<std::string>().find("8 devices for 9 ranks") != std::string::npos);
  // A self-hosted node has no CPU for the master.
  json self = {{"hosts", 1}, {"node", {{"cpu", nullptr}, {"devices", 2}}}, {"placement", {{"master", "cpu"}}}};
  REQUIRE_THROWS_WITH(spec_of(self), Catch::Contains("p.json:/placement/master"));
}

TEST_CASE("sim::platform: fat tree and dragonfly routes", "[sim]") {
  /* In details:
   *   o fat tree "2;4,4;1,2;1,1": 4 leaf switches of 4 nodes, 2 spines; every link 0.5 us
   *   o dragonfly "2,1;2,3;3,1;2": 2 groups x 2 chassis x 3 routers x 2 nodes = 24 nodes; local links 0.5 us,
   *     router links patched to 0.1 us and 20 Gb/s per link (SimGrid: a tier of k links is one link of k x bw)
   * Expectations
   *   o fat tree: 16 nodes; same leaf 2 links (1 us), other leaf 4 links (2 us)
   *   o dragonfly: 24 nodes; same router 2 links; same chassis 3 (green); other chassis 3 (black, 3 links wide);
   *     other group: node-0 -> node-23 is local, green, blue, green, black, local (SimGrid's minimal route)
   */
  const auto ft = probe(spec_of({{"topology", "fat_tree"},
                                 {"fat_tree", {{"levels", 2}, {"down", {4, 4}}, {"up", {1, 2}}, {"parallel", {1, 1}}}},
                                 {"link_latency_s", 0.5e-6}}),
                        16, 16, {{"node-0", "node-1"}, {"node-0", "node-5"}});
  REQUIRE(!ft.contains("error"));
  CHECK(ft["count"] == 16);
  CHECK(ft["routes"][0]["links"].size() == 2);
  CHECK(ft["routes"][0]["lat"].get<double>() == Approx(1e-6));
  CHECK(ft["routes"][1]["links"].size() == 4);
  CHECK(ft["routes"][1]["lat"].get<double>() == Approx(2e-6));

  const json df = {{"topology", "dragonfly"},
                   {"dragonfly",
                    {{"groups", 2},
                     {"group_links", 1},
                     {"chassis", 2},
                     {"chassis_links", 3},
                     {"routers", 3},
                     {"router_links", 1},
                     {"nodes_per_router", 2},
                     {"router_bandwidth_bps", 20e9},
                     {"router_latency_s", 0.1e-6}}},
                   {"link_bandwidth_bps", 40e9},
                   {"link_latency_s", 0.5e-6}};
  const auto d = probe(spec_of(df), 2, 2,
                       {{"node-0", "node-1"}, {"node-0", "node-2"}, {"node-0", "node-6"}, {"node-0", "node-23"}});
  REQUIRE(!d.contains("error"));
  CHECK(d["count"] == 24);
  const auto& r = d["routes"];
  CHECK(r[0]["links"].size() == 2);
  CHECK(r[0]["lat"].get<double>() == Approx(1e-6));
  CHECK(r[1]["links"].size() == 3);
  CHECK(any_contains(r[1]["links"], "green_link"));
  CHECK(r[1]["bw"][1] == 2.5e9);
  CHECK(r[1]["lat"].get<double>() == Approx(1.1e-6));
  CHECK(any_contains(r[2]["links"], "black_link"));
  CHECK(r[2]["bw"][1] == 3 * 2.5e9);
  CHECK(r[3]["links"].size() == 6);
  CHECK(any_contains(r[3]["links"], "blue_link"));
  CHECK(r[3]["lat"].get<double>() == Approx(1e-6 + 4 * 0.1e-6));
  CHECK(r[3]["bw"][0] == 5e9);
}

TEST_CASE("sim::platform: KNL partitioning", "[sim]") {
  /* In details:
   *   o one KNL 7250 (devices.json: 6 TFLOP/s, 475 GB/s, 16 GB MCDRAM, 68 cores) split into 4 groups around
   *     one shared intra-chip link at 475 GB/s
   * Expectations
   *   o every group has 1/4 of the flops, bandwidth and memory, 17 cores
   *   o 95 MB between two groups takes 95e6 / 475e9 = 0.2 ms; two such transfers at once share the link
   *   o capacity: AlexNet (249 MB) + Cifar (687 MB) fits 16 times (14.98 GB) but not 32 times
   */
  auto spec = dts::sim::read_platform({{"base", "knl_partitioned.json"}}, "exp.json", "/platform", platforms_dir());
  CHECK(spec.partition.groups == 4);
  CHECK(spec.device.peak_flops == Approx(6e12 / 4));
  CHECK(spec.device.mem_bw_Bps == Approx(475e9 / 4));
  CHECK(spec.device.memory_bytes == Approx(16e9 / 4));
  CHECK(spec.device.cores == 17);
  for (const bool both : {false, true}) {
    const auto out = dts::test::simulate(spec, 4, [both](auto& comm, auto&, auto& o) {
      dts::Vec buf(95'000'000 / 4, false);
      const int me = comm.rank();
      if (me % 2 == 0 && (both || me == 0)) comm.send(me + 1, 0, buf);
      if (me % 2 == 1 && (both || me == 1)) comm.recv(me - 1, 0, buf);
      o["t"] = comm.now_s();
    });
    REQUIRE(!out.contains("error"));
    CHECK(out["rank"][1]["t"].get<double>() == Approx((both ? 2 : 1) * 95e6 / 475e9).epsilon(1e-9));
  }
  const double alexnet = 249e6, cifar = 687e6;
  spec = dts::sim::read_platform({{"base", "knl_partitioned.json"}, {"chip_partition", {{"groups", 16}}}}, "exp.json",
                                 "/platform", platforms_dir());
  CHECK_NOTHROW(dts::sim::check_partition_capacity(spec, alexnet, cifar));
  spec = dts::sim::read_platform({{"base", "knl_partitioned.json"}, {"chip_partition", {{"groups", 32}}}}, "exp.json",
                                 "/platform", platforms_dir());
  REQUIRE_THROWS_WITH(dts::sim::check_partition_capacity(spec, alexnet, cifar),
                      Catch::Contains("/platform/chip_partition/groups") && Catch::Contains("do not fit"));
}

TEST_CASE("sim::platform: link presets are the paper's alpha-beta rows", "[sim]") {
  // alpha_beta_star.json: FDR (0.7 us end to end, 5 GB/s), CM02 without cross-traffic: 10 MB take 0.7 us + 2 ms.
  for (const auto& [preset, alpha, bw] : {std::tuple{"fdr_ib", 0.7e-6, 5e9}, std::tuple{"qdr_ib", 1.2e-6, 3.333e9},
                                          std::tuple{"ethernet_10g", 7.2e-6, 1.111e9}}) {
    const auto spec = dts::sim::read_platform({{"base", "alpha_beta_star.json"}, {"link_preset", preset}}, "exp.json",
                                              "/platform", platforms_dir());
    CHECK(spec.network_model == "CM02");
    CHECK(spec.simgrid_config.at("network/crosstraffic") == "0");
    const auto out = dts::test::simulate(spec, 2, [](auto& comm, auto&, auto& o) {
      dts::Vec buf(2'500'000, false);
      if (comm.rank() == 0) comm.send(1, 0, buf);
      if (comm.rank() == 1) comm.recv(0, 0, buf);
      o["t"] = comm.now_s();
    });
    REQUIRE(!out.contains("error"));
    CHECK(out["rank"][1]["t"].get<double>() == Approx(alpha + 10e6 / bw).epsilon(1e-3));
  }
}

TEST_CASE("sim::platform: every shipped platform file loads and builds", "[sim]") {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(platforms_dir())) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".json" || name == "devices.json" || name == "links.json") continue;
    INFO(name);
    ++files;
    const auto spec = dts::sim::load_platform_file(entry.path().string());
    const auto out = probe(spec, 3, 2);  // a master and 2 workers
    REQUIRE(!out.contains("error"));
    CHECK(out["hosts"].size() == 3);
  }
  CHECK(files >= 9);
}

TEST_CASE("sim::platform: bad topology keys name the file and key", "[sim]") {
  auto fails = [](json j, const std::string& where) {
    j["device"] = {{"peak_flops", 1e9}, {"mem_bw_Bps", 1e9}};
    REQUIRE_THROWS_WITH(dts::sim::read_platform(j, "p.json", "", platforms_dir()), Catch::Contains(where));
  };
  fails({{"node", {{"cpu", nullptr}, {"devices", 4}, {"pcie_switchs", 2}}}}, "p.json:/node/pcie_switchs");
  fails({{"node", {{"cpu", nullptr}, {"devices", 4}, {"pcie_switches", 3}}}}, "p.json:/node/pcie_switches");
  fails({{"link_preset", "fdr_infiniband"}}, "p.json:/link_preset");
  fails({{"topology", "fat_tree"},
         {"hosts", 5},
         {"fat_tree", {{"levels", 1}, {"down", {4}}, {"up", {1}}, {"parallel", {1}}}}},
        "p.json:/hosts");
  fails({{"topology", "fat_tree"}, {"fat_tree", {{"levels", 2}, {"down", {4}}, {"up", {1}}, {"parallel", {1}}}}},
        "p.json:/fat_tree/down");
  fails({{"topology", "dragonfly"}, {"dragonfly", {{"groups", 4}, {"routers", 2}}}}, "p.json:/dragonfly/groups");
  fails({{"chip_partition", {{"groups", 0}}}}, "p.json:/chip_partition/groups");
  fails({{"placement", {{"ranks", "round_robin"}}}}, "p.json:/placement/ranks");
  REQUIRE_THROWS_WITH(dts::sim::read_platform({{"base", "no_such.json"}}, "exp.json", "/platform", platforms_dir()),
                      Catch::Contains("exp.json:/platform/base"));
}
