// `dtsim list` and the device catalog's half-precision peaks (NAME:fp16, NAME:bf16), through the dtsim binary.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {

std::string catalog() { return dts::test::platform_file("devices.json"); }

// The tiny experiment, modeled numerics, on a catalog device.
nlohmann::json on_device(const std::string& device) {
  auto e = tiny_experiment();
  e.erase("variants");
  e["platform"].erase("device");
  e["platform"]["device"] = device;
  e["platform"]["device_catalog"] = catalog();
  e["model"] = {{"name", "resnet50"}, {"numerics", "modeled"}};
  e["data"] = {{"name", "imagenet"}, {"modeled", true}};
  e["run"] = {{"steps", 4}};
  return e;
}

}  // namespace

TEST_CASE("dtsim list: algorithms, models, data sets, platforms and devices", "[golden]") {
  TempDir tmp;
  const auto r = run_dtsim("list", tmp / "");
  REQUIRE(r.code == 0);
  const std::string out = slurp(tmp / "stdout.txt");
  for (const char* item : {"easgd_async", "resnet50", "fashion_mnist", "imagenet", "ec2_10g.json", "cori_knl.json",
                           "nvidia_v100_sxm2", "nvidia_a100_sxm4_80gb", "nvidia_h100_sxm5"}) {
    INFO(item);
    REQUIRE_THAT(out, Contains(item));
  }
}

TEST_CASE("device catalog: NAME:bf16 computes at the half-precision peak; a missing peak is an input error",
          "[golden]") {
  TempDir tmp;
  double simulated[2] = {0, 0};
  const char* devices[2] = {"nvidia_h100_sxm5", "nvidia_h100_sxm5:bf16"};
  for (int i = 0; i < 2; ++i) {
    write_json(tmp / "exp.json", on_device(devices[i]));
    const std::string out = (tmp / ("out" + std::to_string(i))).string();
    const auto r = run_dtsim("run " + (tmp / "exp.json").string() + " --out " + out, tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 0);
    simulated[i] = nlohmann::json::parse(slurp(fs::path(out) / "summary.json"))["simulated_time_s"].get<double>();
  }
  REQUIRE(simulated[1] < simulated[0]);  // ResNet-50 is compute-bound at 67 TFLOP/s, less so at 989

  for (const auto& [device, message] :
       std::vector<std::pair<std::string, std::string>>{{"nvidia_m40:fp16", "has no peak_flops_fp16"},
                                                        {"nvidia_h100_sxm5:fp64", "unknown precision"},
                                                        {"nvidia_h200:bf16", "unknown device \"nvidia_h200\""}}) {
    write_json(tmp / "bad.json", on_device(device));
    const auto r = run_dtsim("run " + (tmp / "bad.json").string() + " --check", tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Contains("bad.json:/platform/device") && Contains(message));
  }
}
