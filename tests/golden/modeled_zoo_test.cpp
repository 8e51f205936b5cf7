// Modeled numerics at ImageNet scale through the dtsim binary: a zoo model on a modeled data set (no files,
// no kernels, no parameter floats), its ring-allreduce bytes and simulated time against the closed forms,
// and the input errors that keep zoo models and modeled data sets out of real numerics.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "kernels/model/zoo_modeled.hpp"
#include "sim/device.hpp"
#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

namespace {

constexpr double kPeakFlops = 1.5e13, kMemBw = 9e11, kLinkBps = 25e9, kLatencyS = 5e-6;

// ResNet-50 on modeled ImageNet, `workers` ranks of ring allreduce SGD, a star of 25 Gb/s NICs (CM02, no
// cross-traffic: a transfer takes latency + bytes / bandwidth).
nlohmann::json resnet_experiment(int workers, int steps) {
  return {{"name", "zoo"},
          {"platform",
           {{"device", {{"peak_flops", kPeakFlops}, {"mem_bw_Bps", kMemBw}}},
            {"link_bandwidth_bps", kLinkBps},
            {"link_latency_s", kLatencyS},
            {"network_model", "CM02"},
            {"simgrid_config", {{"network/crosstraffic", "0"}}}}},
          {"model", {{"name", "resnet50"}, {"numerics", "modeled"}}},
          {"data", {{"name", "imagenet"}, {"modeled", true}}},
          {"algorithm", {{"name", "allreduce_sgd"}, {"workers", workers}, {"batch_size", 32}}},
          {"run", {{"steps", steps}}}};
}

// Runs `cmd` under /bin/sh; returns its exit code and the peak resident set (KiB) of the shell and every
// process it waited for (dtsim and its per-plan child), as wait4 reports them.
std::pair<int, long> run_measured(const std::string& cmd) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

}  // namespace

TEST_CASE("dtsim run: ResNet-50 on modeled ImageNet, 64 workers of ring allreduce SGD", "[golden][zoo]") {
  /* In details:
   *   o 64 workers, 3 steps, batch 32, ResNet-50 (25,557,032 parameters), ImageNet modeled (1,281,167 samples)
   *   o one ring allreduce of the gradient per step; each rank sends 2 (P-1) chunks of about n/P floats
   * Expectations
   *   o bytes sent per rank = steps * 2 (P-1)/P * 4 n, within the chunks' rounding (a few floats)
   *   o simulated time >= steps * (forward/backward roofline + ring transfer time), and not far above
   *   o steps per epoch = floor(1,281,167 / 64 / 32) = 625
   *   o the whole run stays small in memory: 64 ranks x 2 gradient-sized float vectors would be 13 GB
   */
  const int P = 64, steps = 3;
  TempDir tmp;
  write_json(tmp / "zoo.json", resnet_experiment(P, steps));
  const auto [code, max_rss_kib] = run_measured(std::string(DTSIM_BINARY) + " run " + (tmp / "zoo.json").string() +
                                                " --out " + (tmp / "out").string() + " 2> " + (tmp / "err").string());
  INFO(slurp(tmp / "err"));
  REQUIRE(code == 0);
  CHECK(max_rss_kib < 400 * 1024);
  const auto s = nlohmann::json::parse(slurp(tmp / "out" / "summary.json"));
  const auto cfg = nlohmann::json::parse(slurp(tmp / "out" / "config.resolved.json"));
  CHECK(cfg["model"]["num_params"] == 25'557'032);
  CHECK(cfg["run"]["steps_per_epoch"] == 625);
  CHECK(s["numerics"] == "modeled");
  CHECK(s["test_accuracy"].is_null());

  const double n = 25'557'032;
  const double ring_bytes = steps * 2.0 * (P - 1) / P * 4 * n;
  REQUIRE(s["bytes_sent_per_rank"].size() == P);
  for (const auto& b : s["bytes_sent_per_rank"]) CHECK(std::abs(b.get<double>() - ring_bytes) <= steps * 8.0);

  // Lower bound: the device model's forward/backward plus the ring's bandwidth term (each NIC carries one
  // chunk out and one in at a time). The optimizer, the reductions and the latencies add a little more.
  dts::sim::Device dev;
  dev.peak_flops = kPeakFlops;
  dev.mem_bw_Bps = kMemBw;
  const double compute_s = dev.step_time_s(dts::model::zoo_model("resnet50").layers, 32);
  const double comm_s = 2.0 * (P - 1) / P * 4 * n * 8 / kLinkBps;
  const double t = s["simulated_time_s"].get<double>();
  CHECK(compute_s > 0.05);  // ~2.5e11 flops per batch of 32 at 15 Tflop/s
  CHECK(t >= steps * (compute_s + comm_s));
  CHECK(t <= 1.25 * steps * (compute_s + comm_s));
}

TEST_CASE("dtsim run: zoo models and modeled data sets need modeled numerics", "[golden][zoo]") {
  TempDir tmp;
  auto exp = resnet_experiment(2, 1);
  const std::string base = "run " + (tmp / "e.json").string() + " --out " + (tmp / "out").string();
  write_json(tmp / "e.json", exp);
  // A zoo model has no kernels.
  auto r = run_dtsim(base + " --set model.numerics=real --set data.modeled=null --set data.name=synthetic", tmp / "");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/model/name") && Catch::Contains("modeled"));
  // A modeled data set has no samples.
  r = run_dtsim(base + " --set model.numerics=real --set model.name=logreg", tmp / "");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/data/modeled"));
  // Strict keys; a model that cannot take the data set's samples (VGG-19 needs 3 channels).
  r = run_dtsim(base + " --set data.dir=/tmp", tmp / "");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/data/dir") && Catch::Contains("unknown key"));
  r = run_dtsim(base + " --set data.name=fashion_mnist --set model.name=vgg19", tmp / "");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/model/name") && Catch::Contains("channels"));
  CHECK(!std::filesystem::exists(tmp / "out"));
  // A kernels model in modeled numerics runs on a modeled data set too (cost-only path).
  r = run_dtsim(base + " --set model.name=lenet --set data.name=fashion_mnist", tmp / "");
  INFO(r.err);
  CHECK(r.code == 0);
}
