// The parameter server through the dtsim binary on a real model (issue 17): with 2 workers a sum of two
// gradients has one order, so ps_sync is allreduce_sgd bit for bit, keys whole or sliced, with momentum, weight
// decay and Caffe's inv learning-rate policy: the servers' range steps (state at each piece's offset, the
// round as the iteration) are the optimizer's full step.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;

TEST_CASE("ps_sync with 2 workers is allreduce_sgd bit for bit", "[golden][ps]") {
  TempDir tmp;
  auto exp = dts::test::tiny_experiment();
  // logreg: keys weight (360 floats) and bias (10): whole on servers 0 and 1, or the weight sliced 180 + 180
  exp["model"]["name"] = "logreg";
  exp["algorithm"] = {{"name", "allreduce_sgd"},
                      {"workers", 2},
                      {"batch_size", 16},
                      {"optimizer",
                       {{"kind", "nesterov"},
                        {"lr", 0.05},
                        {"momentum", 0.9},
                        {"weight_decay", 0.001},
                        {"lr_policy", "inv"},
                        {"lr_gamma", 0.05}}}};
  exp["run"] = {{"steps", 24}, {"eval_every_steps", 8}};
  exp["variants"] = {
      {{"name", "allreduce"}},
      {{"name", "ps_whole"}, {"algorithm", {{"name", "ps_sync"}}}},
      {{"name", "ps_sliced"}, {"algorithm", {{"name", "ps_sync"}, {"bigarray_bound", 100}}}},
      {{"name", "ps_fixed_lr"},
       {"algorithm", {{"name", "ps_sync"}, {"optimizer", {{"lr_policy", "fixed"}, {"lr_gamma", nullptr}}}}}}};
  write_json(tmp / "ps.json", exp);
  const auto r = run_dtsim("run " + (tmp / "ps.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto hash = [&](const std::string& v) {
    return nlohmann::json::parse(slurp(tmp / "out" / v / "summary.json"))["final_model_hash"];
  };
  REQUIRE(hash("ps_whole") == hash("allreduce"));
  REQUIRE(hash("ps_sliced") == hash("allreduce"));
  REQUIRE(hash("ps_fixed_lr") != hash("allreduce"));  // the schedule shows in the hash
}
