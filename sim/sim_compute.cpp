// SimCompute: the Trainer's kernels (real numerics) plus device-model charging.
#include "sim/sim_compute.hpp"

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace dts::sim {

SimCompute::SimCompute(const ModelSetup& setup, Rank rank, const PlatformSpec& platform, sg4::Host* host,
                       TimeAccount* account, Wires& wires)
    : TrainerCompute(setup.trainer, rank),
      device_(device_of_host(platform, host)),
      host_(host),
      machine_(machine_of(host)),
      account_(account),
      wires_(wires),
      scenario_(setup.scenario.slows(rank) ? &setup.scenario : nullptr),
      rank_(rank) {
  batch_ = setup.trainer.batch;
  step_time_s_ = setup.step_time_s ? *setup.step_time_s : device_.step_time_s(trainer().cost(), setup.trainer.batch);
  const double whole = device_.step_time_s(trainer().cost(), setup.trainer.batch);
  if (whole > 0) forward_share_ = device_.forward_time_s(trainer().cost(), setup.trainer.batch) / whole;
  const char* data_host = host_->get_property("dts_data_host");
  if (data_host != nullptr && trainer().has_shard() && setup.trainer.train != nullptr) {
    data_host_ = sg4::Host::by_name(data_host);
    const data::Dataset& d = *setup.trainer.train;
    batch_bytes_ = static_cast<double>(setup.trainer.batch) * d.c * d.h * d.w * sizeof(float);  // fp32 samples
    if (platform.node && platform.node->cpu && platform.node->copy.given) {  // the CPU's copy call (and staging)
      batch_copy_ = HostCharge{data_host_, platform.node->cpu->cores, platform.node->copy.batch_seconds(batch_bytes_)};
    }
  }
}

void SimCompute::charge(double seconds, TimeCategory category) {
  const TimeAccount::Scope in(account_, category);
  if (scenario_ != nullptr) seconds = scenario_->stretch(rank_, steps_, sg4::Engine::get_clock(), seconds);
  if (seconds <= 0) return;
  if (machine_ != nullptr) {
    HostCharge{machine_, 1, seconds}.pay();  // one of the shared machine's cores
    return;
  }
  sg4::this_actor::execute(seconds * host_->get_speed());
}

void SimCompute::copy_batch() {
  if (data_host_ != nullptr && batch_bytes_ > 0) {  // the CPU copies the minibatch to the device
    const TimeAccount::Scope copying(account_, TimeCategory::kCpuGpuData);
    batch_copy_.pay();
    wires_.pull(data_host_, host_, static_cast<std::uint64_t>(batch_bytes_));
  }
}

// The kernels run at the end of the step's time, just before their results are used: the update that
// follows reads the gradient while it is still in the host's caches, not after other ranks' work. The params
// do not change meanwhile: the calling actor owns them, and an algorithm whose other activities write them
// holds a lock across the step (BIDMach's learner).
float SimCompute::forward_backward(ConstSlice params, Slice grads) { return forward_backward_then(params, grads, {}); }

float SimCompute::forward_backward_then(ConstSlice params, Slice grads, const std::function<void()>& then) {
  copy_batch();
  charge(step_time_s_, TimeCategory::kForwardBackward);
  if (then) then();
  const float loss = train(params, grads);
  ++steps_;
  return loss;
}

// Back-propagation visits the layers in reverse: the backward time of the layers from the end down to a
// trainable layer (the untrainable ones behind it included) is charged before that layer's ready(). A
// profile whose layer names do not match its parameter blocks gets the whole backward before the first
// ready(), as if nothing could overlap it.
const SimCompute::LayerSchedule& SimCompute::layer_schedule() {
  if (schedule_) return *schedule_;
  const auto layers = model::grad_layers(param_blocks());
  const auto costs = trainer().cost();
  const auto times = device_.layer_times_s(costs, batch_);
  LayerSchedule s;
  s.backward_s.assign(layers.size(), 0.0);
  double total = 0, forward = 0, backward = 0;
  for (const auto& t : times) {
    total += t.fwd_s + t.bwd_s;
    forward += t.fwd_s;
    backward += t.bwd_s;
  }
  const double scale = total > 0 ? step_time_s_ / total : 0;  // to the calibrated step time, if any
  s.forward_s = total > 0 ? forward * scale : step_time_s_;
  std::size_t next = layers.size();  // layers [next, end) have been matched
  double acc = 0;
  for (std::size_t i = costs.size(); i-- > 0;) {
    acc += times[i].bwd_s;
    if (next > 0 && costs[i].name == layers[next - 1].name) {
      s.backward_s[--next] = acc * scale;
      acc = 0;
    }
  }
  if (next > 0) {  // names that do not match: no overlap
    std::fill(s.backward_s.begin(), s.backward_s.end(), 0.0);
    if (!s.backward_s.empty()) s.backward_s.back() = backward * scale;
  } else if (!s.backward_s.empty()) {
    s.backward_s.front() += acc * scale;  // layers before the first trainable one (none run a backward)
  }
  schedule_ = std::move(s);
  return *schedule_;
}

// The kernels (real numerics) all run first: the model's time does not depend on them.
float SimCompute::forward_backward_hooked(ConstSlice params, Slice grads, const StepHooks& hooks) {
  copy_batch();
  const float loss = train(params, grads);
  const auto charge_computing = [&](double seconds) { charge(seconds, TimeCategory::kForwardBackward); };
  if (!hooks.layer_ready) {
    charge_computing(step_time_s_ * forward_share_);
    if (hooks.after_forward) hooks.after_forward();
    charge_computing(step_time_s_ * (1 - forward_share_));
  } else {
    const LayerSchedule& s = layer_schedule();
    charge_computing(s.forward_s);
    if (hooks.after_forward) hooks.after_forward();
    for (std::size_t l = s.backward_s.size(); l-- > 0;) {
      charge_computing(s.backward_s[l]);
      hooks.layer_ready(l);
    }
  }
  ++steps_;
  return loss;
}

void SimCompute::optimizer_step(Slice params, ConstSlice grads) {
  update(params, grads);
  charge_update(params.count);
}

void SimCompute::optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) {
  update_range(params, grads, offset, iteration);
  charge_update(params.count);
}

void SimCompute::charge_update(std::size_t count) {
  const auto& opt = trainer().optimizer();
  charge(device_.update_time_s(static_cast<double>(count), opt.flops_per_param(), opt.bytes_per_param(),
                               trainer().param_blocks().size()),
         update_category(host_));
}

// One flop per element (an add or a multiply-add), every stream a float read or written.
void SimCompute::charge_elementwise(std::size_t n, int streams) {
  charge(device_.elementwise_time_s(WorkKind::kUpdate, static_cast<double>(n), 1.0,
                                    static_cast<double>(streams) * sizeof(float)),
         update_category(host_));
}

// Accounted with the updates, as before the kinds were told apart: TimeAccount has no reduction category.
void SimCompute::charge_reduce(std::size_t n, int streams) {
  charge(device_.elementwise_time_s(WorkKind::kReduce, static_cast<double>(n), 1.0,
                                    static_cast<double>(streams) * sizeof(float)),
         update_category(host_));
}

}  // namespace dts::sim
