// SimCompute: the Trainer's kernels (real numerics) plus device-model charging.
#include "sim/sim_compute.hpp"

#include "sim/time_account.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

SimCompute::SimCompute(const ModelSetup& setup, Rank rank, const Device& device, sg4::Host* host, TimeAccount* account)
    : TrainerCompute(setup.trainer, rank),
      device_(device),
      host_(host),
      account_(account),
      scenario_(setup.scenario.slows(rank) ? &setup.scenario : nullptr),
      rank_(rank) {
  step_time_s_ = setup.step_time_s ? *setup.step_time_s : device_.step_time_s(trainer().cost(), setup.trainer.batch);
  const double whole = device_.step_time_s(trainer().cost(), setup.trainer.batch);
  if (whole > 0) forward_share_ = device_.forward_time_s(trainer().cost(), setup.trainer.batch) / whole;
  const char* data_host = host_->get_property("dts_data_host");
  if (data_host != nullptr && trainer().has_shard() && setup.trainer.train != nullptr) {
    data_host_ = sg4::Host::by_name(data_host);
    const data::Dataset& d = *setup.trainer.train;
    batch_bytes_ = static_cast<double>(setup.trainer.batch) * d.c * d.h * d.w * sizeof(float);  // fp32 samples
  }
}

void SimCompute::charge(double seconds) {
  if (scenario_ != nullptr) seconds = scenario_->stretch(rank_, steps_, sg4::Engine::get_clock(), seconds);
  if (seconds > 0) sg4::this_actor::execute(seconds * host_->get_speed());
}

float SimCompute::forward_backward(ConstSlice params, Slice grads) {
  if (data_host_ != nullptr && batch_bytes_ > 0) {  // the CPU copies the minibatch to the device
    const TimeAccount::Scope copying(account_, TimeCategory::kCpuGpuData);
    sg4::Comm::sendto(data_host_, host_, static_cast<std::uint64_t>(batch_bytes_));
  }
  const float loss = train(params, grads);
  const TimeAccount::Scope computing(account_, TimeCategory::kForwardBackward);
  charge(step_time_s_);
  ++steps_;
  return loss;
}

// As forward_backward, its time in two charges (the forward share, then the rest) around `after_forward`;
// the kernels (real numerics) all run first, as the model's time does not depend on them.
float SimCompute::forward_backward_split(ConstSlice params, Slice grads, const std::function<void()>& after_forward) {
  if (data_host_ != nullptr && batch_bytes_ > 0) {
    const TimeAccount::Scope copying(account_, TimeCategory::kCpuGpuData);
    sg4::Comm::sendto(data_host_, host_, static_cast<std::uint64_t>(batch_bytes_));
  }
  const float loss = train(params, grads);
  {
    const TimeAccount::Scope computing(account_, TimeCategory::kForwardBackward);
    charge(step_time_s_ * forward_share_);
  }
  after_forward();
  {
    const TimeAccount::Scope computing(account_, TimeCategory::kForwardBackward);
    charge(step_time_s_ * (1 - forward_share_));
  }
  ++steps_;
  return loss;
}

void SimCompute::optimizer_step(Slice params, ConstSlice grads) {
  update(params, grads);
  const auto& opt = trainer().optimizer();
  const auto n = static_cast<double>(params.count);
  const TimeAccount::Scope updating(account_, update_category(host_));
  charge(std::max(n * opt.flops_per_param() / device_.peak_flops, n * opt.bytes_per_param() / device_.mem_bw_Bps) /
         device_.efficiency);
}

void SimCompute::charge_elementwise(std::size_t n, int streams) {
  const TimeAccount::Scope updating(account_, update_category(host_));
  charge(device_.elementwise_time_s(static_cast<double>(n), streams));
}

}  // namespace dts::sim
