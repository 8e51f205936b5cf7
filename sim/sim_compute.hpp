// Compute on the simulator: every call advances the calling actor's simulated time by the device model's
// cost (an execute() of the equivalent flops on the rank's host, so host speed profiles slow it down), and
// with real numerics also runs the rank's Trainer (kernels on its data shard; a plain forward-backward's at the
// end of its time, where its results are read, a hooked one's before its hooks). A device whose data lives in
// its node's host memory (papers/easgd_hpc.md §5.6, T5: host property dts_data_host) first copies the
// minibatch from the CPU over PCIe. A scenario's stragglers and jitter stretch every charge of the ranks they
// name (Scenario::stretch, with the rank's count of forward-backward passes as its step). Time goes to the categories
// of the simulation's TimeAccount (F/B, data, update), if it has one.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <simgrid/s4u.hpp>

#include "algorithms/api/scenario.hpp"
#include "algorithms/api/trainer_compute.hpp"
#include "sim/device.hpp"
#include "sim/message_costs.hpp"
#include "sim/platform.hpp"
#include "sim/time_account.hpp"
#include "sim/wire.hpp"

namespace dts::sim {

// What all ranks of one run share (read-only).
struct ModelSetup {
  model::TrainerSetup trainer;
  std::optional<double> step_time_s;  // calibrated forward+backward time, replacing the roofline
  Scenario scenario;                  // stragglers and jitter
};

class SimCompute final : public TrainerCompute {
 public:
  // On `host` of `platform` (its device model, and the node's copy model for minibatches kept on the CPU).
  // `account`: the simulation's time account (null: not accounted); `wires`: the world's, which carry the
  // minibatch copies.
  SimCompute(const ModelSetup& setup, Rank rank, const PlatformSpec& platform, simgrid::s4u::Host* host,
             TimeAccount* account, Wires& wires);
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  // At the device's update_efficiency and reduce_efficiency (Device::elementwise_time_s).
  void charge_elementwise(std::size_t n, int streams) override;
  void charge_reduce(std::size_t n, int streams) override;
  // With layer_ready: the forward time, after_forward, then each layer's backward share before its
  // layer_ready (the device model's per-layer roofline terms, scaled to the calibrated step time when there is
  // one). With after_forward alone: the forward share of the step time (the device model's forward_time_s),
  // after_forward, the rest.
  float forward_backward_hooked(ConstSlice params, Slice grads, const StepHooks& hooks) override;
  void optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) override;
  float forward_backward_then(ConstSlice params, Slice grads, const std::function<void()>& then) override;

 private:
  // Advances the actor's time by `seconds` (stretched by the scenario), accounted to `category`.
  void charge(double seconds, TimeCategory category);
  void charge_update(std::size_t n);  // an optimizer step over n floats, at the device's update_efficiency
  void copy_batch();                  // from the data host, if the minibatches live there
  // The forward time, and the backward time charged before each layer's ready() (forward order), built on
  // first use.
  struct LayerSchedule {
    double forward_s = 0;
    std::vector<double> backward_s;
  };
  const LayerSchedule& layer_schedule();
  std::optional<LayerSchedule> schedule_;
  int batch_ = 1;
  simgrid::s4u::Host* data_host_ = nullptr;  // where the minibatches come from; null: on the device
  double batch_bytes_ = 0;
  HostCharge batch_copy_;  // the CPU's copy call per minibatch (node.copy); nothing when not modeled
  Device device_;
  simgrid::s4u::Host* host_;
  simgrid::s4u::Host* machine_;  // where its executions run (PlatformSpec::machine_cores); null: on host_
  TimeAccount* account_;
  Wires& wires_;
  double step_time_s_ = 0;
  double forward_share_ = 1.0 / 3;      // of step_time_s_: the device model's forward time over forward + backward
  const Scenario* scenario_ = nullptr;  // null: this rank is never slowed
  Rank rank_;
  std::int64_t steps_ = 0;  // forward-backward passes so far
};

}  // namespace dts::sim
