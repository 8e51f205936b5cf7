// node.copy's batch_pageable: a worker's minibatch copy from the CPU pays the staging copy of pageable memory
// (batch bytes / staging bandwidth per step) only when the batches are pageable, whatever the parameters' memory.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using nlohmann::json;

TEST_CASE("node.copy: pinned minibatches pay no staging copy, pageable ones pay bytes / staging bandwidth",
          "[golden]") {
  TempDir tmp;
  const double staging = 1e9, steps = 100, batch_bytes = 64 * 28 * 28 * 4;  // LeNet's batch of 64, fp32
  const auto data_s = [&](bool batch_pageable) {
    const json platform = {{"base", dts::test::platform_file("gpu_testbed_4xm40.json")},
                           {"node",
                            {{"copy",
                              {{"call_latency_s", 0},
                               {"pageable", true},
                               {"staging_bandwidth_Bps", staging},
                               {"batch_pageable", batch_pageable}}}}}};
    const std::string out = (tmp / (batch_pageable ? "pageable" : "pinned")).string();
    const auto r = run_dtsim("run " + (dts::test::study_dir("easgd_hpc") / "h1_time_breakdown.json").string() +
                                 " --out " + out + " --set 'variants=[{\"name\":\"v\"}]' --set run.steps=100" +
                                 " --set 'platform=" + platform.dump() + "'",
                             tmp / "");
    INFO(r.err);
    REQUIRE(r.code == 0);
    return json::parse(slurp(out + "/v/summary.json"))["time_breakdown"]["ranks"][1]["seconds"]["cpu_gpu_data"]
        .get<double>();
  };
  CHECK(data_s(true) - data_s(false) == Approx(steps * batch_bytes / staging).epsilon(1e-9));
}
