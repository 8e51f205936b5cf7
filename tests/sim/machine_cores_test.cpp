// machine_cores (issue 19; sim/platform.hpp): every host's compute and message overheads run on one shared
// machine of N cores, one core at most each; and network_stack's per-byte work, which runs alongside a flow
// (sim/message_cost_spec.hpp): on toy platforms where the time-slicing follows from a formula.
#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include "tests/sim/sim_harness.hpp"

using nlohmann::json;

namespace {

constexpr double kLat = 10e-6;

// A star of 1 Gflop/s devices, 1 GB/s and 10 us links, pure alpha-beta; `extra` merged over it.
json star(const json& extra) {
  json p = {{"device", {{"peak_flops", 1e9}, {"mem_bw_Bps", 1e9}}},
            {"link_bandwidth_bps", 8e9},
            {"link_latency_s", kLat},
            {"network_model", "CM02"},
            {"simgrid_config", {{"network/crosstraffic", "0"}}}};
  if (!extra.is_null()) p.merge_patch(extra);  // `{}` in a call is null, which a merge patch would keep
  return p;
}

// `ranks` ranks on platform `p`, each with a SimCompute whose forward-backward takes 1 s (model.step_time_s).
json run_ranks(const json& p, int ranks, const dts::test::ContextBody& body) {
  return dts::test::run_lenet_ranks(p, ranks, 1, dts::sim::Fidelity::kMessage, 1.0, body);
}

void step(dts::Context& ctx) {
  dts::Vec params = ctx.compute.make_vec(), grads = ctx.compute.make_vec();
  ctx.compute.forward_backward(params, grads);
}

}  // namespace

TEST_CASE("sim::platform machine_cores: the ranks' compute time-slices the machine's cores", "[sim]") {
  /* In details:
   *   o `busy` of `ranks` ranks compute a 1 s step at once; the hosts share one machine of N cores (0: each
   *     host its own device)
   * Expectations
   *   o each step ends at max(1, busy / N) s: 5 on 2 cores 2.5 s, 3 on 2 1.5 s, 2 on 1 2 s; 5 on 8 cores 1 s
   *   o ranks that do not compute leave their share to the others: 2 of 4 busy on 2 cores, 1 s
   *   o without machine_cores, 1 s whatever the count
   */
  for (const auto& [cores, ranks, busy, expect] :
       {std::tuple{2, 5, 5, 2.5}, std::tuple{2, 3, 3, 1.5}, std::tuple{1, 2, 2, 2.0}, std::tuple{8, 5, 5, 1.0},
        std::tuple{2, 4, 2, 1.0}, std::tuple{0, 5, 5, 1.0}}) {
    INFO(cores << " cores, " << ranks << " ranks, " << busy << " busy");
    const json p = star(cores > 0 ? json{{"machine_cores", cores}} : json::object());
    const json out = run_ranks(p, ranks, [n = busy](dts::Context& ctx, json& o) {  // clang 14: no bindings
      if (ctx.comm.rank() < n) step(ctx);
      o["t"] = ctx.comm.now_s();
    });
    INFO(out.dump());
    REQUIRE(out.is_array());
    for (int r = 0; r < ranks; ++r) {
      REQUIRE(out[r]["t"].get<double>() == Approx(r < busy ? expect : 0.0).epsilon(1e-9));
    }
  }
}

TEST_CASE("sim::platform machine_cores: message overheads take a core of the machine from the compute", "[sim]") {
  /* In details:
   *   o 3 ranks; rank 0 sends rank 2 an empty message with a send overhead of 1 s (message_overhead send
   *     [[0, 1, 0]]) while ranks 1 and 2 compute a 1 s step; rank 2 then receives it
   * Expectations
   *   o 2 cores: three executions of 1 s share 2 cores, so the step and the overhead all end at 1.5 s; the
   *     message arrives at 1.5 s + 2 * 10 us
   *   o own hosts: the step ends at 1 s, the message arrives at 1 s + 2 * 10 us
   */
  for (const int cores : {2, 0}) {
    INFO(cores << " cores");
    json p = star({{"message_overhead", {{"send", {{0, 1.0, 0}}}}}});
    if (cores > 0) p["machine_cores"] = cores;
    const json out = run_ranks(p, 3, [](dts::Context& ctx, json& o) {
      dts::Vec none(0, true);
      if (ctx.comm.rank() == 0) ctx.comm.send(2, 1, none);
      if (ctx.comm.rank() > 0) step(ctx);
      o["step_end"] = ctx.comm.now_s();
      if (ctx.comm.rank() == 2) ctx.comm.recv(0, 1, none);
      o["t"] = ctx.comm.now_s();
    });
    INFO(out.dump());
    REQUIRE(out.is_array());
    const double end = cores > 0 ? 1.5 : 1.0;
    REQUIRE(out[1]["step_end"].get<double>() == Approx(end).epsilon(1e-9));
    REQUIRE(out[2]["step_end"].get<double>() == Approx(end).epsilon(1e-9));
    REQUIRE(out[2]["t"].get<double>() == Approx(end + 2 * kLat).epsilon(1e-9));
  }
}

TEST_CASE("sim::MessageCosts network_stack: per-byte work alongside the flow, sharing the cores", "[sim]") {
  /* In details:
   *   o 1 MB messages (1 ms on the 1 GB/s links; a route 2 * 10 us + 1 ms); network_stack send 0.5 ns/B and
   *     recv 2 ns/B: 0.5 ms of the sender's CPU and 2 ms of the receiver's per message
   *   o one message from rank 0 to rank 1, each on its own host
   *   o machine_cores 1: ranks 0 -> 1 and 2 -> 3 at once, and rank 4 computing a 1 s step, all on one core
   * Expectations
   *   o own hosts: delivered at max(route, 0.5 ms, 2 ms) = 2 ms (the work runs alongside the flow, not after)
   *   o one core: four works (0.5, 2, 0.5, 2 ms) and the step share it: each at 1/5 of the core until the 0.5 ms
   *     ones end (2.5 ms), then 1/3 until the 2 ms ones end (2.5 + 3 * 1.5 = 7 ms): both messages arrive at
   *     7 ms, the step ends at 1 s + 0.5 + 0.5 + 2 + 2 ms = 1.005 s
   */
  const json stack = {{"network_stack", {{"send_s_per_byte", 0.5e-9}, {"recv_s_per_byte", 2e-9}}}};
  const auto send_1mb = [](dts::Context& ctx, json& o) {
    dts::Vec buf(250'000, true);
    const dts::Rank me = ctx.comm.rank();
    if (me == 4) step(ctx);
    if (me < 4) me % 2 == 0 ? ctx.comm.send(me + 1, 1, buf) : ctx.comm.recv(me - 1, 1, buf);
    o["t"] = ctx.comm.now_s();
  };
  json out = run_ranks(star(stack), 2, send_1mb);
  INFO(out.dump());
  REQUIRE(out[1]["t"].get<double>() == Approx(2e-3).epsilon(1e-9));
  json p = star(stack);
  p["machine_cores"] = 1;
  out = run_ranks(p, 5, send_1mb);
  INFO(out.dump());
  REQUIRE(out[1]["t"].get<double>() == Approx(7e-3).epsilon(1e-9));
  REQUIRE(out[3]["t"].get<double>() == Approx(7e-3).epsilon(1e-9));
  REQUIRE(out[4]["t"].get<double>() == Approx(1.005).epsilon(1e-9));
  REQUIRE_THROWS_WITH(dts::sim::read_platform(star({{"network_stack", {{"send_s_per_byte", -1}}}}), "p.json", "", "."),
                      Catch::Contains("p.json:/network_stack/send_s_per_byte"));
}

TEST_CASE("sim::platform machine_cores: refused off a star of single-device nodes, naming the key", "[sim]") {
  const auto read = [](const json& extra) { return dts::sim::read_platform(star(extra), "p.json", "", "."); };
  REQUIRE(read({{"machine_cores", 2}}).machine_cores == 2);
  REQUIRE(read({}).machine_cores == 0);
  REQUIRE(!read({}).resolved.contains("machine_cores"));  // absent: not even named
  REQUIRE_THROWS_WITH(read({{"machine_cores", 0}}), Catch::Contains("p.json:/machine_cores"));
  REQUIRE_THROWS_WITH(read({{"machine_cores", 2}, {"chip_partition", {{"groups", 2}}}}),
                      Catch::Contains("p.json:/machine_cores") && Catch::Contains("single-device"));
  REQUIRE_THROWS_WITH(read({{"machine_cores", 2},
                            {"topology", "fat_tree"},
                            {"fat_tree", {{"levels", 1}, {"down", {4}}, {"up", {1}}, {"parallel", {1}}}}}),
                      Catch::Contains("p.json:/machine_cores"));
}
