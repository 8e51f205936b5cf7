// The device model's framework terms (sim/device.hpp, platforms/README.md "Framework terms", issue 43): kernel
// launches and per-layer host work, which the device overlaps within a pass, and GEMM calls too small to reach
// the roofline's efficiency. A small network's step is the framework's, a large one's the roofline's; without
// the keys every time is the bare roofline's, bit for bit.
#include <algorithm>
#include <catch2/catch.hpp>

#include "core/config_reader.hpp"
#include "kernels/model/layer_cost.hpp"
#include "kernels/model/zoo_modeled.hpp"
#include "sim/device.hpp"

using dts::sim::Device;
using dts::sim::WorkKind;
using nlohmann::json;

namespace {

Device device_from(const json& j) {
  dts::ConfigReader r(j, "dev.json", "/device");
  return dts::sim::read_device(r, "test");
}

// A V100-like device: 15.7 TFLOP/s, 900 GB/s, efficiency 0.5.
const json kBase = {{"peak_flops", 15.7e12}, {"mem_bw_Bps", 900e9}, {"efficiency", 0.5}};

json with_terms(double launch_s, double layer_s, double half_flops) {
  json j = kBase;
  j["launch_s"] = launch_s;
  j["layer_overhead_s"] = layer_s;
  j["half_efficiency_flops"] = half_flops;
  return j;
}

}  // namespace

TEST_CASE("sim::Device framework terms: LeNet is the framework's, ResNet-50 the roofline's", "[sim]") {
  /* In details:
   *   o the V100-like device bare and with launch 3.8 us, 10 us per layer pass, a 10 us floor per GEMM call
   *     (half_efficiency_flops = 10e-6 x 0.5 x 15.7e12)
   *   o LeNet at batch 64 (9 layers, 33 kernels, 11 GEMM calls) and ResNet-50 at batch 32 (175 layers)
   * Expectations
   *   o LeNet: more than twice its roofline, and most of it the framework's terms
   *   o ResNet-50: within 3 % of its roofline
   */
  const Device bare = device_from(kBase);
  const Device d = device_from(with_terms(3.8e-6, 10e-6, 10e-6 * 0.5 * 15.7e12));
  const auto lenet = dts::model::model_profile("lenet", 1, 28, 28, 10).layers;
  const auto resnet = dts::model::zoo_model("resnet50").layers;
  const double lenet_bare = bare.step_time_s(lenet, 64), lenet_full = d.step_time_s(lenet, 64);
  CHECK(lenet_full > 2 * lenet_bare);
  const double resnet_bare = bare.step_time_s(resnet, 32), resnet_full = d.step_time_s(resnet, 32);
  CHECK(resnet_full >= resnet_bare);
  CHECK(resnet_full < 1.03 * resnet_bare);
}

TEST_CASE("sim::Device framework terms: a pass is the longer of the host's and the device's sums", "[sim]") {
  /* In details:
   *   o one fully connected layer as the only trainable layer (2 kernels and 1 GEMM forward, 2 and 1 backward
   *     as the first trainable layer): 1000 -> 1000, batch b
   *   o launch 5 us, 100 us per layer pass, half_efficiency_flops H
   * Expectations
   *   o small batch: each pass is the host's 100 + 2 x 5 = 110 us
   *   o large batch: each pass is the device's (roofline + H / peak) / efficiency
   *   o the per-layer times (hook timing) add up to the step time
   */
  const double H = 1e8, peak = 15.7e12, bw = 900e9, eff = 0.5;
  const Device d = device_from(with_terms(5e-6, 100e-6, H));
  const auto fc = dts::model::cost::gemm("fc1", 1e6, 1000, 1000, 1e6 + 1000, false, true);
  CHECK(d.forward_time_s({fc}, 1) == Approx(110e-6).epsilon(1e-12));
  CHECK(d.step_time_s({fc}, 1) == Approx(220e-6).epsilon(1e-12));
  const double b = 4096;
  const double fwd_roof =
      std::max(b * fc.fwd_flops_per_sample / peak, (b * fc.fwd_bytes_per_sample + fc.param_bytes) / bw);
  CHECK(d.forward_time_s({fc}, int(b)) == Approx((fwd_roof + H / peak) / eff).epsilon(1e-12));
  const auto times = d.layer_times_s({fc}, int(b));
  REQUIRE(times.size() == 1);
  CHECK(times[0].fwd_s + times[0].bwd_s == Approx(d.step_time_s({fc}, int(b))).epsilon(1e-12));
}

TEST_CASE("sim::Device framework terms: off by default, and an update launches per parameter block", "[sim]") {
  /* In details:
   *   o the device without the keys, and with zero keys given; ResNet-50 at batch 32
   *   o an update of 1e6 parameters in 100 blocks with launch 5 us: 4 kernels a block = 2 ms of launches
   * Expectations
   *   o without terms: the roofline formula bit for bit (sum of the layers' rooflines / efficiency)
   *   o the update takes the longer of its element-wise pass and its launches
   */
  const Device bare = device_from(kBase);
  const Device zero = device_from(with_terms(0, 0, 0));
  const auto resnet = dts::model::zoo_model("resnet50").layers;
  CHECK(zero.step_time_s(resnet, 32) == bare.step_time_s(resnet, 32));
  CHECK_FALSE(zero.has_framework_terms());
  const Device d = device_from(with_terms(5e-6, 0, 0));
  const double pass = d.elementwise_time_s(WorkKind::kUpdate, 1e6, 2, 12);
  CHECK(d.update_time_s(1e6, 2, 12, 100) == Approx(std::max(pass, 100 * 4 * 5e-6)).epsilon(1e-12));
  CHECK(bare.update_time_s(1e6, 2, 12, 100) == pass);
}

TEST_CASE("sim::read_device: a negative framework term is an input error naming the key", "[sim]") {
  json j = kBase;
  j["launch_s"] = -1;
  CHECK_THROWS_WITH(device_from(j), Catch::Contains("/device/launch_s"));
}
