// Host-side message costs (issue 19; sim/message_costs.hpp) on toy platforms where each effect follows from a
// formula: LogGP overheads by segment, their CPU sharing with compute, host-device copies per call and with
// staging, seeded noise; and the input errors of their keys.
#include <catch2/catch.hpp>
#include <cmath>
#include <simgrid/s4u.hpp>

#include "sim/message_costs.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::Vec;
using dts::test::pinned_star;
using dts::test::simulate;

namespace {

constexpr double kBw = 8e9;  // 1 GB/s
constexpr double kLat = 10e-6;

dts::sim::OverheadCurve curve(std::initializer_list<dts::sim::OverheadSegment> s) { return s; }

// Rank 0 sends `floats` floats to rank 1 (blocking or not); both report when their operation completed.
nlohmann::json one_message(const dts::sim::PlatformSpec& spec, std::size_t floats, bool blocking) {
  return simulate(spec, 2, [floats, blocking](auto& comm, auto&, auto& o) {
    Vec buf(floats, true);
    if (comm.rank() == 0) {
      blocking ? comm.send(1, 7, buf) : comm.isend(1, 7, buf).wait_ok();
    } else {
      comm.recv(0, 7, buf);
    }
    o["t"] = comm.now_s();
  });
}

}  // namespace

TEST_CASE("sim::MessageCosts: one message costs os(s) + route + or(s), by segment", "[sim]") {
  /* In details:
   *   o 2 hosts of a pinned star (1 GB/s, 10 us links: route time 2 * 10 us + s / 1e9)
   *   o send  [[0, 5 us, 1 ns/B], [1000, 20 us, 2 ns/B]]; recv [[0, 3 us, 0.5 ns/B], [1000, 7 us, 1 ns/B]];
   *     isend [[0, 40 us, 0]]
   *   o s = 996 bytes (below the breakpoint) and 1000 bytes (at it: the second segment)
   * Expectations
   *   o both ends complete at os(s) + 2 * 10 us + s / 1e9 + or(s); a non-blocking send pays isend's 40 us
   */
  auto spec = pinned_star(2, kBw, kLat);
  spec.message_overhead.given = true;
  spec.message_overhead.send = curve({{0, 5e-6, 1e-9}, {1000, 20e-6, 2e-9}});
  spec.message_overhead.recv = curve({{0, 3e-6, 0.5e-9}, {1000, 7e-6, 1e-9}});
  spec.message_overhead.isend = curve({{0, 40e-6, 0}});
  const auto route = [](double s) { return 2 * kLat + s / 1e9; };
  const double below = 996, at = 1000;
  const double t_below = (5e-6 + below * 1e-9) + route(below) + (3e-6 + below * 0.5e-9);
  const double t_at = (20e-6 + at * 2e-9) + route(at) + (7e-6 + at * 1e-9);
  for (const auto& [bytes, expect] : {std::pair{below, t_below}, std::pair{at, t_at}}) {
    const auto out = one_message(spec, static_cast<std::size_t>(bytes / 4), true);
    REQUIRE(!out.contains("error"));
    REQUIRE(out["rank"][1]["t"].get<double>() == Approx(expect).epsilon(1e-9));
    REQUIRE(out["rank"][0]["t"].get<double>() == Approx(expect).epsilon(1e-9));
  }
  const auto out = one_message(spec, 250, false);
  REQUIRE(out["rank"][1]["t"].get<double>() == Approx(40e-6 + route(at) + 7e-6 + at * 1e-9).epsilon(1e-9));
}

TEST_CASE("sim::MessageCosts: an overhead shares the CPU with a compute on its host", "[sim]") {
  /* In details:
   *   o rank 0's host: 1 Gflop/s; an activity computes 1e9 flop (1 s alone) while rank 0 sends an empty
   *     message with os = 0.1 s, both from t = 0
   *   o one core: fair sharing gives each half the host until the overhead's 0.1 s of work is done (t = 0.2),
   *     then the compute's remaining 0.9 s run alone; four cores: the overhead takes one core (a quarter)
   * Expectations
   *   o 1 core: compute ends at 1.1 s, the message arrives at 0.2 s + 2 * 10 us
   *   o 4 cores: compute ends at 1 + 0.1 / 4 s, the message at 0.1 s + 2 * 10 us
   */
  for (const int cores : {1, 4}) {
    auto spec = pinned_star(2, kBw, kLat);
    spec.device.cores = cores;
    spec.message_overhead.given = true;
    spec.message_overhead.send = spec.message_overhead.isend = curve({{0, 0.1, 0}});
    const auto out = simulate(spec, 2, [](auto& comm, auto& node, auto& o) {
      Vec none(0, true);
      if (comm.rank() == 0) {
        double compute_end = 0;
        auto work = node.spawn("compute", [&compute_end] {
          simgrid::s4u::this_actor::execute(1e9);
          compute_end = simgrid::s4u::Engine::get_clock();
        });
        comm.send(1, 1, none);
        work->join();
        o["compute_end"] = compute_end;
      } else {
        comm.recv(0, 1, none);
        o["t"] = comm.now_s();
      }
    });
    REQUIRE(!out.contains("error"));
    const double shared = cores == 1 ? 0.1 : 0.1 / 4;  // what the overhead takes from the compute
    REQUIRE(out["rank"][0]["compute_end"].get<double>() == Approx(1.0 + shared).epsilon(1e-9));
    REQUIRE(out["rank"][1]["t"].get<double>() == Approx((cores == 1 ? 0.2 : 0.1) + 2 * kLat).epsilon(1e-9));
  }
}

namespace {

// One node: a CPU host (rank 0, 1 Gflop/s, one core) and one device (rank 1) behind one PCIe switch, each
// PCIe link 1 GB/s and 1 us: a CPU-device route takes 2 us + s / 1e9.
dts::sim::PlatformSpec gpu_node(double call_latency_s, bool pageable, double staging_Bps) {
  auto spec = pinned_star(1, kBw, kLat);
  dts::sim::NodeSpec node;
  node.cpu = dts::sim::Device{};
  node.cpu->peak_flops = 1e9;
  node.devices = 1;
  node.pcie_bandwidth_bps = 8e9;
  node.pcie_latency_s = 1e-6;
  node.copy = {true, call_latency_s, pageable, staging_Bps};
  spec.node = node;
  spec.placement.ranks = "one_per_host";
  return spec;
}

// Rank 0 (the CPU) sends `pieces` messages that tile `floats` floats, all posted at once and then waited (as
// ParamExchange sends a vector per layer); returns when rank 1 had them all.
double cpu_to_device(const dts::sim::PlatformSpec& spec, std::size_t floats, std::size_t pieces) {
  const auto out = simulate(spec, 2, [floats, pieces](auto& comm, auto&, auto& o) {
    Vec buf(floats, true);
    const std::size_t each = floats / pieces;
    std::vector<dts::Request> reqs;
    for (std::size_t p = 0; p < pieces; ++p) {
      const dts::Slice piece = buf.sub(p * each, each);
      reqs.push_back(comm.rank() == 0 ? comm.isend(1, 2, piece) : comm.irecv(0, 2, piece));
    }
    for (auto& r : reqs) r.wait_ok();
    o["t"] = comm.now_s();
  });
  REQUIRE(!out.contains("error"));
  return out["rank"][1]["t"].get<double>();
}

}  // namespace

TEST_CASE("sim::MessageCosts: host-device copies pay a call per message, and staging from pageable memory", "[sim]") {
  /* In details:
   *   o CPU -> device, s = 4 MB as one message (packed) or as k = 4 messages of s / 4 (per layer); call
   *     latency c = 50 us; pageable at a staging bandwidth of 0.5 GB/s (slower than PCIe, so that each
   *     piece's flow ends before the next piece's staging does: the flows never overlap)
   * Expectations
   *   o pinned, packed: c + 2 us + s / 1e9; pageable adds exactly s / 0.5e9
   *   o pageable, per layer: k * (c + (s / k) / 0.5e9) + 2 us + (s / k) / 1e9: k calls where packed pays one
   */
  const double s = 4e6, c = 50e-6, stg = 0.5e9;
  const std::size_t floats = 1'000'000, k = 4;
  const double pinned = cpu_to_device(gpu_node(c, false, 0), floats, 1);
  REQUIRE(pinned == Approx(c + 2e-6 + s / 1e9).epsilon(1e-9));
  const double packed = cpu_to_device(gpu_node(c, true, stg), floats, 1);
  REQUIRE(packed - pinned == Approx(s / stg).epsilon(1e-9));
  const double per_layer = cpu_to_device(gpu_node(c, true, stg), floats, k);
  REQUIRE(per_layer == Approx(k * (c + s / k / stg) + 2e-6 + s / k / 1e9).epsilon(1e-9));
}

namespace {

// Rank 0 sends n empty messages one after the other, each with os = 1 ms times its noise factor; returns
// each message's factor as seen from its duration.
std::vector<double> noise_factors(std::uint64_t seed, int n) {
  auto spec = pinned_star(2, kBw, kLat);
  spec.message_overhead.given = true;
  spec.message_overhead.send = spec.message_overhead.isend = curve({{0, 1e-3, 0}});
  spec.message_noise = {true, 0.5};
  const auto out = simulate(
      spec, 2,
      [n](auto& comm, auto&, auto& o) {
        Vec none(0, true);
        for (int i = 0; i < n; ++i) {
          const double t0 = comm.now_s();
          comm.rank() == 0 ? comm.send(1, 1, none) : comm.recv(0, 1, none);
          if (comm.rank() == 0) o["d"].push_back((comm.now_s() - t0 - 2 * kLat) / 1e-3);
        }
      },
      dts::sim::Fidelity::kMessage, {}, seed);
  REQUIRE(!out.contains("error"));
  return out["rank"][0]["d"].get<std::vector<double>>();
}

}  // namespace

TEST_CASE("sim::MessageCosts: message noise is reproducible from the seed, and of mean 1", "[sim]") {
  /* In details:
   *   o 1000 blocking empty messages, os = 1 ms x a lognormal factor (sigma 0.5) each; the sender waits for
   *     each before the next, so a message's duration is its factor x 1 ms + 2 * 10 us
   * Expectations
   *   o the same seed gives the same factors to the last bit; another seed gives others
   *   o the factors are not all equal, and their mean is 1 within 0.08 (its standard error is about 0.017)
   */
  const auto a = noise_factors(7, 1000);
  REQUIRE(a == noise_factors(7, 1000));
  const auto b = noise_factors(8, 1000);
  REQUIRE(a != b);
  double mean = 0, lo = a.front(), hi = a.front();
  for (double f : a) {
    mean += f / static_cast<double>(a.size());
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  REQUIRE(hi / lo > 2);
  REQUIRE(mean == Approx(1.0).margin(0.08));
}

TEST_CASE("sim::MessageCosts: bad keys are input errors naming them; collective fidelity refuses them", "[sim]") {
  const nlohmann::json device = {{"peak_flops", 1e9}, {"mem_bw_Bps", 1e9}};
  const auto read = [&](nlohmann::json extra) {
    extra["device"] = device;
    return dts::sim::read_platform(extra, "p.json", "", ".");
  };
  const nlohmann::json ok = {{"send", {{0, 1e-6, 0}, {1000, 2e-6, 1e-9}}}};
  const auto spec = read({{"message_overhead", ok}});
  REQUIRE(dts::sim::overhead_s(spec.message_overhead.isend, 2000) == Approx(2e-6 + 2000e-9));  // isend: as send
  REQUIRE(dts::sim::overhead_s(spec.message_overhead.send, 999) == Approx(1e-6));
  REQUIRE(!read({}).resolved.contains("message_overhead"));  // absent: not even named
  REQUIRE_THROWS_WITH(read({{"message_overhead", {{"send", {{0, -1e-6, 0}}}}}}),
                      Catch::Contains("p.json:/message_overhead/send/0/1"));
  REQUIRE_THROWS_WITH(read({{"message_overhead", {{"recv", {{1000, 1e-6, 0}, {10, 1e-6, 0}}}}}}),
                      Catch::Contains("p.json:/message_overhead/recv/1/0") && Catch::Contains("increase"));
  REQUIRE_THROWS_WITH(read({{"message_overhead", {{"send", {{0, 1e-6}}}}}}),
                      Catch::Contains("/message_overhead/send/0"));
  REQUIRE_THROWS_WITH(read({{"message_noise", {{"sigma", -0.1}}}}), Catch::Contains("/message_noise/sigma"));
  REQUIRE_THROWS_WITH(read({{"node", {{"cpu", device}, {"copy", {{"pageable", true}}}}}}),
                      Catch::Contains("/node/copy/staging_bandwidth_Bps"));
  REQUIRE_THROWS_WITH(read({{"node", {{"cpu", nullptr}, {"copy", {{"call_latency_s", 1e-5}}}}}}),
                      Catch::Contains("/node/copy"));
  REQUIRE_NOTHROW(dts::sim::check_message_costs_fidelity(spec, false));
  REQUIRE_THROWS_WITH(dts::sim::check_message_costs_fidelity(spec, true),
                      Catch::Contains("p.json:/message_overhead") && Catch::Contains("fidelity"));
}

TEST_CASE("sim::platform: shared NICs and per-pair connections, a pair's exchange against a ring", "[sim]") {
  /* In details (issue 19's "per-pair connection where both directions share one path", which Open MPI's TCP
   * BTL shows: README "Validating the simulator"):
   *   o hosts of a pinned star (1 GB/s, 10 us); 1 MB messages, all sent at t = 0
   *   o pair: 2 hosts send each other one; ring: each of 3 hosts sends to the next and receives from the one before
   * Expectations (2 * 10 us + f * 1e6 / 1e9)
   *   o split_duplex: f = 1 for both (each NIC direction carries one flow)
   *   o shared: f = 2 for both (each NIC link carries the flow out and the flow in)
   *   o per_connection: pair f = 2 (one connection carries both directions), ring f = 1 (different connections)
   */
  for (const char* sharing : {"split_duplex", "shared", "per_connection"}) {
    for (const int hosts : {2, 3}) {
      INFO(sharing << ", " << hosts << " hosts");
      auto spec = pinned_star(hosts, kBw, kLat);
      spec.sharing = sharing;
      const auto out = simulate(spec, hosts, [hosts](auto& comm, auto&, auto& o) {
        Vec out_buf(250'000, true), in_buf(250'000, true);
        const dts::Rank next = (comm.rank() + 1) % hosts, prev = (comm.rank() + hosts - 1) % hosts;
        auto rx = comm.irecv(prev, 3, in_buf);
        comm.isend(next, 3, out_buf).wait_ok();
        rx.wait_ok();
        o["t"] = comm.now_s();
      });
      REQUIRE(!out.contains("error"));
      const std::string s = sharing;
      const double f = s == "split_duplex" ? 1 : s == "shared" ? 2 : hosts == 2 ? 2 : 1;
      for (int r = 0; r < hosts; ++r) {
        REQUIRE(out["rank"][r]["t"].get<double>() == Approx(2 * kLat + f * 1e6 / 1e9).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("sim::platform: per_connection is refused off the star and above 256 nodes, naming sharing", "[sim]") {
  const nlohmann::json tree = {{"topology", "fat_tree"},
                               {"device", {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}}},
                               {"fat_tree", {{"levels", 1}, {"down", {4}}, {"up", {1}}, {"parallel", {1}}}},
                               {"sharing", "per_connection"}};
  REQUIRE_THROWS_WITH(dts::sim::read_platform(tree, "p.json", "", "."),
                      Catch::Contains("p.json:/sharing") && Catch::Contains("star topology only"));
  auto spec = pinned_star(257, kBw, kLat);
  spec.sharing = "per_connection";
  const auto out = simulate(spec, 2, [](auto&, auto&, auto&) {});
  REQUIRE(out.contains("error"));
  REQUIRE_THAT(out["error"].get<std::string>(), Catch::Contains("/sharing") && Catch::Contains("at most 256 nodes"));
}
