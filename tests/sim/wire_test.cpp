// Wires (sim/wire.hpp) against the s4u::Comm::sendto it replaces: the same flows, started at the same
// instants, end at the same simulated times to the last bit, sharing links as sendto's do; and a transfer
// that waits for an earlier one in the same mailbox is impossible (each takes its own).
#include <catch2/catch.hpp>

#include "sim/platform.hpp"
#include "sim/wire.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;
using nlohmann::json;

namespace {

struct Flow {
  int from, to;
  double start_s;
  std::uint64_t bytes;
};

// Flows over a star of 4 hosts: two that share host 0's uplink, one that shares host 1's downlink with the
// first, a small one that overtakes a big one on the same pair, and a late one.
const std::vector<Flow> kFlows = {{0, 1, 0.0, 5'000'000}, {0, 2, 0.0, 3'000'000}, {3, 1, 0.0001, 1'000'000},
                                  {2, 3, 0.0, 8'000'000}, {2, 3, 0.0002, 1'000},  {1, 0, 0.003, 2'000'000}};

// Each flow's end time, by Wires (`wires`) or by sendto, each flow carried by an actor of its own as the
// couriers of sim/sim_world.cpp are.
json end_times(bool wires) {
  return dts::test::run_isolated([wires] {
    const auto engine = dts::test::quiet_engine();
    const auto hosts = dts::sim::build_platform(dts::test::pinned_star(4, 10e9, 1e-5), 4);
    dts::sim::Wires carrier;
    std::vector<double> ends(kFlows.size(), -1);
    for (std::size_t i = 0; i < kFlows.size(); ++i) {
      const Flow f = kFlows[i];
      sg4::Host* from = hosts[static_cast<std::size_t>(f.from)];
      sg4::Host* to = hosts[static_cast<std::size_t>(f.to)];
      sg4::Actor::create("flow", from, [&, f, from, to, i] {
        sg4::this_actor::sleep_until(f.start_s);
        wires ? carrier.carry(from, to, f.bytes) : sg4::Comm::sendto(from, to, f.bytes);
        ends[i] = sg4::Engine::get_clock();
      });
    }
    engine->run();
    return json(ends);
  });
}

}  // namespace

TEST_CASE("sim::Wires: flows end exactly when s4u::Comm::sendto's do, sharing links alike", "[sim]") {
  const json by_wires = end_times(true), by_sendto = end_times(false);
  REQUIRE_FALSE(by_wires.contains("error"));
  REQUIRE_FALSE(by_sendto.contains("error"));
  const auto w = by_wires.get<std::vector<double>>(), s = by_sendto.get<std::vector<double>>();
  REQUIRE(w.size() == kFlows.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    INFO("flow " << i);
    CHECK(w[i] > kFlows[i].start_s);
    CHECK(w[i] == s[i]);  // bit for bit
  }
  // Sharing happened: the first flow took longer than alone on the link (2 latencies + S / B).
  CHECK(w[0] > 2e-5 + 5'000'000 * 8 / 10e9 * 1.2);
  // The small flow on pair 2 -> 3 ended before the big one started earlier.
  CHECK(w[4] < w[3]);
}
