// RouteTimes (sim/route_times.hpp) against SimGrid: a flow alone on its route ends when alone_s says, on a star, a
// fat tree and a dragonfly, with LV08's default factors (and its TCP window's bound where the latency is long),
// CM02 and SMPI's piecewise factors.
#include <catch2/catch.hpp>

#include "sim/platform.hpp"
#include "sim/route_times.hpp"
#include "sim/wire.hpp"
#include "tests/sim/fidelity_harness.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;
using nlohmann::json;

namespace {

// Flows one after the other (each alone), between hosts 0 and `far`, then 1 and 0: per flow, SimGrid's duration
// and alone_s.
json durations(const dts::sim::PlatformSpec& spec, int hosts, int far) {
  return dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    const auto h = dts::sim::build_platform(spec, hosts);
    const dts::sim::RouteTimes routes;
    dts::sim::Wires wires;
    json out = json::array();
    sg4::Actor::create("flows", h[0], [&] {
      for (const auto& [a, b] : std::vector<std::pair<int, int>>{{0, far}, {1, 0}}) {
        for (const double bytes : {1e3, 7e4, 1e6, 1e8}) {
          sg4::Host* from = h[static_cast<std::size_t>(a)];
          sg4::Host* to = h[static_cast<std::size_t>(b)];
          sg4::this_actor::set_host(from);  // a wire leaves from its actor's host
          const double start = sg4::Engine::get_clock();
          wires.carry(from, to, static_cast<std::uint64_t>(bytes));
          out.push_back({{"simgrid", sg4::Engine::get_clock() - start}, {"alone", routes.alone_s(from, to, bytes)}});
        }
      }
    });
    engine->run();
    return out;
  });
}

}  // namespace

TEST_CASE("sim::RouteTimes: a flow alone takes what SimGrid gives it", "[sim]") {
  const auto [topology, hosts, model] = GENERATE(table<const char*, int, const char*>({{"star", 4, "LV08"},
                                                                                       {"star", 4, "CM02"},
                                                                                       {"star", 4, "SMPI"},
                                                                                       {"fat_tree", 16, "LV08"},
                                                                                       {"dragonfly", 16, "LV08"}}));
  dts::sim::PlatformSpec spec;
  spec.name = topology;
  spec.topology = "xml";
  spec.xml_file = dts::test::platform_xml(topology, hosts);
  spec.network_model = model;
  const json out = durations(spec, hosts, hosts - 1);
  INFO(topology << " " << model << " " << out.dump());
  REQUIRE_FALSE(out.contains("error"));
  REQUIRE(out.size() == 8);
  for (const json& f : out) CHECK(f["alone"].get<double>() == Approx(f["simgrid"].get<double>()).epsilon(1e-9));
}

TEST_CASE("sim::RouteTimes: a long route's rate is bounded by the TCP window", "[sim]") {
  // 2 x 5 ms of latency: LV08's window of 4 MiB allows 4194304 / (2 x 0.01 s) = 210 MB/s of the 1.25 GB/s.
  dts::sim::PlatformSpec spec = dts::test::pinned_star(2, 10e9, 5e-3);
  spec.simgrid_config.clear();
  const json out = durations(spec, 2, 1);
  INFO(out.dump());
  REQUIRE_FALSE(out.contains("error"));
  const json& big = out[3];  // 100 MB from host 0 to host 1
  CHECK(big["simgrid"].get<double>() == Approx(13.01 * 0.01 + 1e8 / (0.97 * 4194304 / 0.02)).epsilon(1e-9));
  for (const json& f : out) CHECK(f["alone"].get<double>() == Approx(f["simgrid"].get<double>()).epsilon(1e-9));
}
