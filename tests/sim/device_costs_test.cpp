// The device model's compute-side cost terms (sim/device.hpp, issue 19): element-wise passes at their kind's
// efficiency (an optimizer step or an update rule at update_efficiency, the additions of a reduction at
// reduce_efficiency), and a thread-scaling curve under which a part of a chip loses less than the whole. Each
// term's time follows from its formula; with no new key every time is the one before the terms existed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>

#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "core/errors.hpp"
#include "sim/sim_compute.hpp"
#include "tests/sim/sim_harness.hpp"

namespace sg4 = simgrid::s4u;
using dts::sim::Device;
using dts::sim::WorkKind;
using nlohmann::json;

namespace {

Device device_from(const json& j) {
  dts::ConfigReader r(j, "dev.json", "/device");
  return dts::sim::read_device(r, "test");
}

// USL: the time on n cores over the time at linear scaling.
double usl(double s, double k, double n) { return 1 + s * (n - 1) + k * n * (n - 1); }

}  // namespace

TEST_CASE("sim::Device: an element-wise pass takes its roofline time over its kind's efficiency", "[sim]") {
  /* In details:
   *   o 1 TFLOP/s, 100 GB/s, efficiency 0.5 (the F/B kernels'); update_efficiency 0.05, reduce_efficiency 0.2
   *   o n = 1e6 elements of 1 flop and 12 bytes (an axpy: 3 float streams)
   * Expectations
   *   o roofline = max(1e6 / 1e12, 12e6 / 1e11) = 1.2e-4 s; update 1.2e-4 / 0.05, reduce 1.2e-4 / 0.2
   *   o without the keys both kinds run at the device's efficiency, bit for bit the formula before the kinds
   */
  const json base = {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}, {"efficiency", 0.5}};
  json j = base;
  j["update_efficiency"] = 0.05;
  j["reduce_efficiency"] = 0.2;
  const Device d = device_from(j);
  const double n = 1e6, roofline = std::max(n / 1e12, 12 * n / 1e11);
  CHECK(d.elementwise_time_s(WorkKind::kUpdate, n, 1, 12) == Approx(roofline / 0.05).epsilon(1e-12));
  CHECK(d.elementwise_time_s(WorkKind::kReduce, n, 1, 12) == Approx(roofline / 0.2).epsilon(1e-12));

  const Device plain = device_from(base);
  CHECK(plain.efficiency_of(WorkKind::kUpdate) == 0.5);
  CHECK(plain.efficiency_of(WorkKind::kReduce) == 0.5);
  CHECK(plain.thread_scaling.slowdown(plain.cores) == 1.0);
  const double streams = 3;
  const double before = std::max(n * 1.0 / 1e12, n * streams * sizeof(float) / 1e11) / 0.5;
  CHECK(plain.elementwise_time_s(WorkKind::kUpdate, n, 1.0, streams * sizeof(float)) == before);
}

TEST_CASE("sim::SimCompute: updates at update_efficiency, a collective's additions at reduce_efficiency", "[sim]") {
  /* In details:
   *   o 2 hosts, 1 TFLOP/s and 100 GB/s each, efficiency 0.5; links 1 Tb/s, 0 latency, CM02 (no factors)
   *   o modeled LeNet: n = 431,080 floats. Each rank: an SGD step (2 flops, 12 bytes per float), an update rule
   *     over 3 streams (charge_elementwise), then a tree allreduce of n floats (rank 0 adds rank 1's vector:
   *     charge_reduce over 3 streams), at message and at collective fidelity
   * Expectations
   *   o SGD step: max(2n / 1e12, 12n / 1e11) / update_efficiency; the update rule: max(n / 1e12, 12n / 1e11)
   *     / update_efficiency, for update_efficiency 0.5 (absent) and 0.01
   *   o the allreduce with reduce_efficiency 0.02 takes longer than with the default by exactly the addition's
   *     extra time, max(n / 1e12, 12n / 1e11) x (1 / 0.02 - 1 / 0.5), on both fidelities
   */
  const auto fidelity = GENERATE(dts::sim::Fidelity::kMessage, dts::sim::Fidelity::kCollective);
  const auto run = [&](std::optional<double> update, std::optional<double> reduce) {
    json p = {{"device", {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}, {"efficiency", 0.5}}},
              {"hosts", 2},
              {"link_bandwidth_bps", 1e12},
              {"link_latency_s", 0},
              {"network_model", "CM02"},
              {"simgrid_config", {{"network/crosstraffic", "0"}}}};
    if (update) p["device"]["update_efficiency"] = *update;
    if (reduce) p["device"]["reduce_efficiency"] = *reduce;
    return dts::test::run_lenet_ranks(p, 2, 64, fidelity, {}, [](dts::Context& ctx, json& out) {
      dts::Vec params = ctx.compute.make_vec(), grads = ctx.compute.make_vec();
      out["n"] = params.count();
      double t = sg4::Engine::get_clock();
      ctx.compute.optimizer_step(params, grads);
      out["sgd"] = sg4::Engine::get_clock() - t;
      t = sg4::Engine::get_clock();
      ctx.compute.charge_elementwise(params.count(), 3);
      out["rule"] = sg4::Engine::get_clock() - t;
      t = sg4::Engine::get_clock();
      dts::collectives::tree_allreduce(ctx.comm, ctx.compute, dts::Group::range(0, 2), params, 77);
      out["allreduce"] = sg4::Engine::get_clock() - t;
    });
  };
  const json plain = run({}, {}), slow_update = run(0.01, {}), slow_reduce = run({}, 0.02);
  INFO(plain.dump() << slow_update.dump() << slow_reduce.dump());
  REQUIRE(plain.is_array());
  const double n = plain[0]["n"].get<double>();
  REQUIRE(n == 431080);
  const double sgd = std::max(2 * n / 1e12, 12 * n / 1e11), rule = std::max(n / 1e12, 12 * n / 1e11);
  for (int r = 0; r < 2; ++r) {
    CHECK(plain[r]["sgd"].get<double>() == Approx(sgd / 0.5).epsilon(1e-9));
    CHECK(plain[r]["rule"].get<double>() == Approx(rule / 0.5).epsilon(1e-9));
    CHECK(slow_update[r]["sgd"].get<double>() == Approx(sgd / 0.01).epsilon(1e-9));
    CHECK(slow_update[r]["rule"].get<double>() == Approx(rule / 0.01).epsilon(1e-9));
    CHECK(slow_update[r]["allreduce"].get<double>() == Approx(plain[r]["allreduce"].get<double>()).epsilon(1e-9));
    const double extra = slow_reduce[r]["allreduce"].get<double>() - plain[r]["allreduce"].get<double>();
    CHECK(extra == Approx(rule * (1 / 0.02 - 1 / 0.5)).epsilon(1e-6));
  }
}

TEST_CASE("sim::Device: thread scaling stretches the whole chip more than its parts", "[sim]") {
  /* In details:
   *   o a 64-core chip, 64 GFLOP/s (1 per core), 1 PB/s (compute bound), efficiency 1; thread_scaling s, k
   *   o one layer of F = 1e9 flops forward and 2F backward per sample; B = 64 samples
   *   o the whole chip computes the B samples; split_device(chip, 4) gives parts of 16 cores, 16 GFLOP/s, each
   *     computing B / 4 of them at the same time
   * Expectations
   *   o whole: 3 B F / 64e9 x (1 + s 63 + k 64 63); a part: 3 (B / 4) F / 16e9 x (1 + s 15 + k 16 15)
   *   o s = k = 0: the same time (the split alone gains nothing); s or k > 0: the parts finish first
   */
  const auto [s, k] = GENERATE(table<double, double>({{0.0, 0.0}, {0.0, 1e-3}, {0.02, 0.0}, {0.01, 2e-4}}));
  const json j = {{"peak_flops", 64e9},
                  {"mem_bw_Bps", 1e15},
                  {"cores", 64},
                  {"thread_scaling", {{"serial_fraction", s}, {"contention", k}}}};
  const Device chip = device_from(j);
  const Device part = dts::sim::split_device(chip, 4);
  REQUIRE(part.cores == 16);
  REQUIRE(part.thread_scaling.contention == k);
  const double F = 1e9, B = 64;
  dts::model::LayerCost layer;
  layer.fwd_flops_per_sample = F;
  layer.bwd_flops_per_sample = 2 * F;
  const double whole_s = chip.step_time_s({layer}, 64), part_s = part.step_time_s({layer}, 16);
  CHECK(whole_s == Approx(3 * B * F / 64e9 * usl(s, k, 64)).epsilon(1e-12));
  CHECK(part_s == Approx(3 * (B / 4) * F / 16e9 * usl(s, k, 16)).epsilon(1e-12));
  if (s == 0 && k == 0) {
    CHECK(part_s == Approx(whole_s).epsilon(1e-12));
  } else {
    CHECK(part_s < whole_s);
  }
  // Element-wise passes are stretched alike (an update of n floats on the whole chip).
  CHECK(chip.elementwise_time_s(WorkKind::kUpdate, 1e9, 1, 4) == Approx(1e9 / 64e9 * usl(s, k, 64)).epsilon(1e-12));
}

TEST_CASE("sim: a partitioned chip with a thread-scaling curve trains faster than the whole", "[sim]") {
  /* In details:
   *   o one KNL-like chip (platform chip_partition): 64 cores, 640 GFLOP/s, 64 GB/s, 16 GB; modeled LeNet,
   *     batch 64, SGD; thread_scaling none or {s 0.01, k 5e-4}
   *   o the whole chip (groups 1, one rank) runs 4 steps; 4 groups (four ranks of 16 cores) run 1 step each: the
   *     same samples. Every layer of a part at 1/4 of the flops and bandwidth takes 4 times the whole's
   * Expectations
   *   o without the curve both take the same time (to rounding); with it the whole takes
   *     (1 + s 63 + k 64 63) and a part (1 + s 15 + k 16 15) times as long as without: the parts finish first
   *   o the partition capacity check still refuses 4 x (weights + data) above the chip's 16 GB
   */
  const double s = 0.01, k = 5e-4;
  const auto run = [&](int groups, bool curve) {
    json dev = {{"peak_flops", 6.4e11}, {"mem_bw_Bps", 6.4e10}, {"cores", 64}, {"memory_bytes", 16e9}};
    if (curve) dev["thread_scaling"] = {{"serial_fraction", s}, {"contention", k}};
    const json p = {{"device", dev}, {"hosts", 1}, {"chip_partition", {{"groups", groups}}}};
    const json out = dts::test::run_lenet_ranks(
        p, groups, 64, dts::sim::Fidelity::kMessage, {}, [groups](dts::Context& ctx, json& o) {
          dts::Vec params = ctx.compute.make_vec(), grads = ctx.compute.make_vec();
          for (int step = 0; step < 4 / groups; ++step) {
            ctx.compute.forward_backward(params, grads);
            ctx.compute.optimizer_step(params, grads);
          }
          o["end_s"] = sg4::Engine::get_clock();
        });
    INFO(out.dump());
    REQUIRE(out.is_array());
    double end = 0;
    for (const auto& r : out) end = std::max(end, r["end_s"].get<double>());
    return end;
  };
  const double whole = run(1, false), parts = run(4, false), whole_curve = run(1, true), parts_curve = run(4, true);
  CHECK(parts == Approx(whole).epsilon(1e-9));
  CHECK(whole_curve == Approx(whole * usl(s, k, 64)).epsilon(1e-9));
  CHECK(parts_curve == Approx(parts * usl(s, k, 16)).epsilon(1e-9));
  CHECK(parts_curve < whole_curve);

  const json p = {{"device",
                   {{"peak_flops", 6.4e11},
                    {"mem_bw_Bps", 6.4e10},
                    {"cores", 64},
                    {"memory_bytes", 16e9},
                    {"thread_scaling", {{"serial_fraction", s}, {"contention", k}}}}},
                  {"hosts", 1},
                  {"chip_partition", {{"groups", 4}}}};
  const auto spec = dts::sim::read_platform(p, "p.json", "", ".");
  CHECK(spec.partition.chip.cores == 64);
  CHECK(spec.device.cores == 16);
  CHECK(spec.device.thread_scaling.serial_fraction == s);
  CHECK_NOTHROW(dts::sim::check_partition_capacity(spec, 1e9, 3e9));
  CHECK_THROWS_WITH(dts::sim::check_partition_capacity(spec, 1e9, 3.1e9),
                    Catch::Contains("p.json:/chip_partition/groups") && Catch::Contains("do not fit"));
}

TEST_CASE("sim::read_device: a bad compute-side cost is an input error naming the file and key", "[sim]") {
  // The reason matters: before these keys existed each was refused too, as an unknown key.
  const auto [key, value, path, why] = GENERATE(table<std::string, json, std::string, std::string>({
      {"update_efficiency", 0.0, "/device/update_efficiency", "out of range"},
      {"update_efficiency", 1.5, "/device/update_efficiency", "out of range"},
      {"reduce_efficiency", "fast", "/device/reduce_efficiency", "expected a number"},
      {"thread_scaling", 0.1, "/device/thread_scaling", "expected {serial_fraction, contention}"},
      {"thread_scaling", {{"contention", -1}}, "/device/thread_scaling/contention", "out of range"},
      {"thread_scaling", {{"serial_fraction", 2}}, "/device/thread_scaling/serial_fraction", "out of range"},
      {"thread_scaling", {{"kappa", 0.1}}, "/device/thread_scaling/kappa", "unknown key"},
  }));
  json p = {{"device", {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e11}}}};
  p["device"][key] = value;
  INFO(p.dump());
  CHECK_THROWS_AS(dts::sim::read_platform(p, "p.json", "", "."), dts::ConfigError);
  CHECK_THROWS_WITH(dts::sim::read_platform(p, "p.json", "", "."),
                    Catch::Contains("p.json:" + path + ": ") && Catch::Contains(why));
}

TEST_CASE("sim::platform: an inline device with a base is that catalog device with its keys over it", "[sim]") {
  /* In details:
   *   o devices.json's intel_knl_7250 (6 TFLOP/s, 475 GB/s, efficiency 0.5, 68 cores, 16 GB) as the base of
   *     an inline device that adds update_efficiency and a thread-scaling curve, as a fitted platform would
   * Expectations
   *   o the catalog's figures, the added keys; an overridden efficiency carries the kinds without their own
   *   o an unknown base is an input error naming /device/base
   */
  const char* src = std::getenv("DTS_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const std::string dir = std::string(src) + "/platforms";
  const json knl = {{"base", "intel_knl_7250"},
                    {"update_efficiency", 0.01},
                    {"thread_scaling", {{"serial_fraction", 0.001}, {"contention", 1e-4}}}};
  const auto spec = dts::sim::read_platform({{"device", knl}, {"hosts", 1}}, "p.json", "", dir);
  CHECK(spec.device.name == "intel_knl_7250");
  CHECK(spec.device.peak_flops == 6e12);
  CHECK(spec.device.cores == 68);
  CHECK(spec.device.memory_bytes == 16e9);
  CHECK(spec.device.efficiency_of(WorkKind::kUpdate) == 0.01);
  CHECK(spec.device.efficiency_of(WorkKind::kReduce) == 0.5);
  CHECK(spec.device.thread_scaling.contention == 1e-4);
  CHECK(spec.resolved["device_resolved"]["thread_scaling"]["serial_fraction"] == 0.001);

  const auto faster =
      dts::sim::read_platform({{"device", {{"base", "intel_knl_7250"}, {"efficiency", 0.8}}}}, "p.json", "", dir);
  CHECK(faster.device.efficiency_of(WorkKind::kUpdate) == 0.8);
  CHECK(faster.device.thread_scaling.slowdown(68) == 1.0);

  CHECK_THROWS_WITH(dts::sim::read_platform({{"device", {{"base", "intel_knl_9999"}}}}, "p.json", "", dir),
                    Catch::Contains("p.json:/device/base") && Catch::Contains("unknown device"));
}
