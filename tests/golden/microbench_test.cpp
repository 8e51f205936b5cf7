// The calibration microbenchmarks (algorithm microbench) on a star whose times follow from alpha-beta
// formulas (CM02, no cross-traffic: a message of s bytes over two links of latency L and bandwidth B takes
// 2 L + s / B): a ping-pong step is two of those, an exchange one (split-duplex NICs carry both directions at
// full rate) or 2 L + 2 s / B when the NICs are shared by both directions, and an exchange overlapped with a
// longer compute takes the compute's time.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;
using nlohmann::json;

TEST_CASE("microbench: ping-pong, exchange and overlap steps take the alpha-beta formulas' times", "[golden]") {
  TempDir tmp;
  const double L = 1e-4, B = 1e9 / 8, s = 1e6, compute = 0.02;
  const json plat = {{"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}},
                     {"link_bandwidth_bps", B * 8},
                     {"link_latency_s", L},
                     {"network_model", "CM02"},
                     {"simgrid_config", {{"network/crosstraffic", "0"}}}};
  write_json(tmp / "plat.json", plat);
  json shared = plat;
  shared["sharing"] = "shared";
  write_json(tmp / "shared.json", shared);
  write_json(
      tmp / "mb.json",
      {{"name", "mb"},
       {"platform", "plat.json"},
       {"model", {{"name", "mlp"}, {"numerics", "modeled"}, {"step_time_s", compute}}},
       {"data", {{"name", "fashion_mnist"}, {"modeled", true}}},
       {"algorithm", {{"name", "microbench"}, {"workers", 3}, {"mode", "pingpong"}, {"bytes", s}, {"messages", 2}}},
       {"run", {{"steps", 5}, {"eval_every_steps", 0}}},
       {"variants",
        {{{"name", "pingpong"}},
         {{"name", "exchange"}, {"algorithm", {{"mode", "exchange"}}}},
         {{"name", "shared"}, {"algorithm", {{"mode", "exchange"}}}, {"platform", "shared.json"}},
         {{"name", "overlap"}, {"algorithm", {{"mode", "overlap"}, {"messages", 1}}}},
         {{"name", "update"}, {"algorithm", {{"mode", "update"}, {"messages", 1}}}},
         {{"name", "update3"}, {"algorithm", {{"mode", "update"}, {"messages", 3}}}},
         {{"name", "update3_half"},
          {"algorithm", {{"mode", "update"}, {"messages", 3}}},
          {"platform", {{"base", "plat.json"}, {"device", {{"update_efficiency", 0.5}}}}}}}}});
  const auto r = run_dtsim("run " + (tmp / "mb.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto step = [&](const std::string& v) {
    const json sum = json::parse(slurp(tmp / "out" / v / "summary.json"));
    return sum["simulated_time_s"].get<double>() / sum["steps_per_worker"].get<double>();
  };
  const double one_way = 2 * L + s / B;
  CHECK(step("pingpong") == Approx(2 * 2 * one_way).epsilon(1e-9));  // 2 messages a step, each a round trip
  CHECK(step("exchange") == Approx(2 * one_way).epsilon(1e-9));
  CHECK(step("shared") == Approx(2 * (2 * L + 2 * s / B)).epsilon(1e-9));
  CHECK(step("overlap") == Approx(compute).epsilon(1e-9));  // the exchange hides under the compute
  // update: `messages` optimizer steps a step and no message, at the device's update_efficiency.
  CHECK(step("update") > 0);
  CHECK(step("update3") == Approx(3 * step("update")).epsilon(1e-9));
  CHECK(step("update3_half") == Approx(2 * step("update3")).epsilon(1e-9));
  CHECK(json::parse(slurp(tmp / "out" / "update3" / "summary.json"))["messages"] == 0);
  // Rank 2 has no partner: it sends nothing; the pair sends 2 messages a step each.
  const json sum = json::parse(slurp(tmp / "out" / "pingpong" / "summary.json"));
  CHECK(sum["bytes_sent_per_rank"] == json::array({5 * 2 * s, 5 * 2 * s, 0.0}));
}
