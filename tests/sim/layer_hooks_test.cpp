// SimCompute::forward_backward_hooked with layer_ready (algorithms/api/compute.hpp): the forward pass, then each
// trainable layer's backward share before its ready(), in reverse layer order, adding up to forward_backward's time.
// SimCompute::forward_backward_then: its hook at the end of the step's time, before the kernels run.
#include <catch2/catch.hpp>

#include <algorithm>

#include "algorithms/algorithm.hpp"
#include "kernels/model/trainer.hpp"
#include "kernels/model/zoo_modeled.hpp"
#include "sim/launcher.hpp"
#include "sim/sim_compute.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;
using nlohmann::json;

namespace {

// One rank, modeled ResNet-50 at batch 32 on the pinned star's device: {"ready": [[layer, time], ...], "end": t,
// "plain": forward_backward's time}.
json hook_times(std::optional<double> step_time_s) {
  return dts::test::run_isolated([&] {
    dts::data::Dataset imagenet{"imagenet", 1'281'167, 3, 224, 224, 1000, {}, {}};
    dts::sim::ModelSetup setup;
    setup.trainer.network = "resnet50";
    setup.trainer.real = false;
    setup.trainer.train = &imagenet;
    setup.trainer.batch = 32;
    setup.step_time_s = step_time_s;
    dts::sim::SimJob job;
    job.platform = dts::test::pinned_star(1, 10e9, 5e-6);
    json out;
    job.main = [&](dts::Context& ctx) {
      dts::Vec params = ctx.compute.make_vec(), grads = ctx.compute.make_vec();
      const double t0 = sg4::Engine::get_clock();
      ctx.compute.forward_backward(params, grads);
      out["plain"] = sg4::Engine::get_clock() - t0;
      const double t1 = sg4::Engine::get_clock();
      dts::Compute::StepHooks hooks;
      hooks.layer_ready = [&](std::size_t l) { out["ready"].push_back({l, sg4::Engine::get_clock() - t1}); };
      ctx.compute.forward_backward_hooked(params, grads, hooks);
      out["end"] = sg4::Engine::get_clock() - t1;
      out["layers"] = dts::model::grad_layers(ctx.compute.param_blocks()).size();
    };
    dts::test::use_sim_compute(job, setup);
    dts::sim::run_simulation(job);
    return out;
  });
}

}  // namespace

TEST_CASE("forward_backward_hooked: each layer ready after its backward share, in reverse order", "[sim]") {
  /* ResNet-50: 53 convolutions, 53 batch norms and the fc are its trainable layers. The first ready() comes
   * after the whole forward pass and the backward of the loss, pooling and fc; the last at the end of the
   * step, which is forward_backward's time (the roofline's, or the calibrated one). */
  const auto step = GENERATE(std::optional<double>{}, std::optional<double>{0.096});
  const json out = hook_times(step);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  const std::size_t L = out["layers"].get<std::size_t>();
  REQUIRE(L == 107);
  REQUIRE(out["ready"].size() == L);
  const double plain = out["plain"].get<double>();
  if (step) REQUIRE(plain == Approx(*step).epsilon(1e-12));
  double prev = 0;
  for (std::size_t k = 0; k < L; ++k) {
    REQUIRE(out["ready"][k][0].get<std::size_t>() == L - 1 - k);
    const double t = out["ready"][k][1].get<double>();
    REQUIRE(t > prev);  // every trainable layer has a backward to wait for
    prev = t;
  }
  // The fc's gradient comes after the forward (about a third of the step) and before much of the backward.
  const double first = out["ready"][0][1].get<double>();
  REQUIRE(first > 0.25 * plain);
  REQUIRE(first < 0.5 * plain);
  REQUIRE(out["end"].get<double>() == Approx(plain).epsilon(1e-9));
  REQUIRE(out["ready"][L - 1][1].get<double>() == Approx(plain).epsilon(1e-9));
}

TEST_CASE("forward_backward_then: then() at the end of the step's time, the kernels after it", "[sim]") {
  /* Real numerics (logreg on 64 made-up samples): then() sees the clock at the step's end and the gradient
   * not yet written; afterwards loss and gradient are those of the model's Trainer from the same state, and
   * the step took as long as a plain forward_backward. */
  const json out = dts::test::run_isolated([] {
    dts::data::Dataset d{"made_up", 64, 1, 4, 4, 10, {}, {}};
    d.x.resize(64 * 16);
    for (std::size_t i = 0; i < d.x.size(); ++i) d.x[i] = static_cast<float>((i * 37) % 101) / 101.0f;
    for (int i = 0; i < 64; ++i) d.y.push_back(i % 10);
    dts::sim::ModelSetup setup;
    setup.trainer.network = "logreg";
    setup.trainer.train = &d;
    setup.trainer.batch = 8;
    dts::sim::SimJob job;
    job.platform = dts::test::pinned_star(1, 10e9, 5e-6);
    json result;
    job.main = [&](dts::Context& ctx) {
      dts::Vec params = ctx.compute.make_vec(), grads = ctx.compute.make_vec();
      ctx.compute.init_params(params);
      std::fill(grads.data().begin(), grads.data().end(), -7.0f);
      const double t0 = sg4::Engine::get_clock();
      result["loss"] = ctx.compute.forward_backward_then(params, grads, [&] {
        result["then_at"] = sg4::Engine::get_clock() - t0;
        result["untouched"] = std::all_of(grads.data().begin(), grads.data().end(), [](float g) { return g == -7.0f; });
      });
      result["time"] = sg4::Engine::get_clock() - t0;
      result["grads"] = std::vector<float>(grads.data().begin(), grads.data().end());
      const double t1 = sg4::Engine::get_clock();
      ctx.compute.forward_backward(params, grads);
      result["plain_time"] = sg4::Engine::get_clock() - t1;
    };
    dts::test::use_sim_compute(job, setup);
    dts::sim::run_simulation(job);
    dts::model::Trainer trainer(setup.trainer, 0);
    std::vector<float> params(trainer.num_params()), grads(trainer.num_params());
    trainer.init_params(params);
    result["trainer_loss"] = trainer.forward_backward(params, grads);
    result["trainer_grads"] = grads;
    return result;
  });
  INFO(out.dump().substr(0, 400));
  REQUIRE(!out.contains("error"));
  REQUIRE(out["time"].get<double>() > 0);
  REQUIRE(out["then_at"].get<double>() == out["time"].get<double>());
  REQUIRE(out["untouched"].get<bool>());
  REQUIRE(out["plain_time"].get<double>() == out["time"].get<double>());
  REQUIRE(out["loss"] == out["trainer_loss"]);
  REQUIRE(out["grads"] == out["trainer_grads"]);
}
