// The binomial broadcast's cost on a pinned star, at both fidelities: a parent serves its children one after
// the other, so a broadcast of n bytes over P = 2^k members costs lg P (alpha + n / B), as MPICH's
// MPIR_Bcast_binomial, whatever the message size.
#include <catch2/catch.hpp>

#include "algorithms/collectives/collectives.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

// Completion time of every member of one broadcast from member 0 of P.
std::vector<double> broadcast_times(int P, std::size_t floats, double bandwidth_bps, double latency_s,
                                    dts::sim::Fidelity fidelity) {
  const auto out = dts::test::simulate(
      dts::test::pinned_star(P, bandwidth_bps, latency_s), P,
      [P, floats](auto& comm, auto&, auto& o) {
        dts::Vec v(floats, false);
        dts::collectives::tree_broadcast(comm, dts::Group::range(0, P), v, 0, 3);
        o["t"] = comm.now_s();
      },
      fidelity);
  REQUIRE(!out.contains("error"));
  std::vector<double> t;
  for (const auto& r : out["rank"]) t.push_back(r["t"].get<double>());
  return t;
}

}  // namespace

TEST_CASE("tree_broadcast: lg P (alpha + n / B) on a star, large or latency-bound messages", "[sim]") {
  /* In details:
   *   o a star of 8 hosts, LV08 with its factors pinned to 1 (tests/sim/sim_harness.hpp): a message of S
   *     bytes takes alpha + S / B with alpha = 2 x link latency
   *   o large: 100 MB at 1 GB/s, 10 us links; latency-bound: 4 bytes at 1 Tb/s, 50 us links
   *   o the root (index 0) sends to 4, then 2, then 1; 4 to 6, then 5; 2 to 3; 6 to 7
   * Expectations
   *   o every member finishes after 3 message times: member 4 hears the root after one and serves 6 and 5,
   *     member 2 hears it after two and serves 3, ... (the old all-at-once sends shared the root's link
   *     three ways: 6 n / B for large messages)
   *   o the same times at both fidelities, up to SimGrid's timing precision (1 ns)
   */
  const auto [floats, bandwidth, latency] =
      GENERATE(table<std::size_t, double, double>({{25'000'000, 8e9, 10e-6}, {1, 1e12, 50e-6}}));
  const auto fidelity = GENERATE(dts::sim::Fidelity::kMessage, dts::sim::Fidelity::kCollective);
  INFO(floats << " floats, " << dts::sim::to_string(fidelity));
  const double m = 2 * latency + 4.0 * static_cast<double>(floats) * 8 / bandwidth;
  const auto t = broadcast_times(8, floats, bandwidth, latency, fidelity);
  for (std::size_t r = 0; r < t.size(); ++r) {
    INFO("member " << r);
    REQUIRE(t[r] == Approx(3 * m).epsilon(1e-6).margin(3e-9));
  }
}
