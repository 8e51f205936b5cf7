// The seam's Compute on real processes: the rank's model::Trainer (the same network, shard, minibatch order
// and optimizer as in the simulator), with wall time passing by itself. Real numerics only: modeled numerics
// have no kernels to run, so they are an input error here (the runner says so, naming the key). Under a
// scenario (realexec/mpi_scenario.hpp) each call first checks the rank's failure (RankGone once it has
// failed), and a slowed rank sleeps after its compute, as the simulator charges stretch() of its modeled time.
#pragma once

#include <atomic>
#include <cstdint>

#include "algorithms/api/trainer_compute.hpp"
#include "realexec/mpi_scenario.hpp"

namespace dts::mpi {

class MpiCompute final : public TrainerCompute {
 public:
  // Throws InputError when setup.real is false. `scenario` (may be null) must outlive this.
  MpiCompute(const model::TrainerSetup& setup, Rank rank, const RankScenario* scenario = nullptr);
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  void optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) override;
  // The caller's loop over the floats takes the time it takes, before or after this call, which does not see
  // it: a straggler does not slow it (stretch() of no time is none); the failure check still happens here.
  void charge_elementwise(std::size_t /*n*/, int /*streams*/) override;
  // The kernels run forward and backward in one call: `after_forward` comes after both.
  // forward_backward_hooked: Compute's, forward_backward whole and then the hooks. The kernels compute the
  // whole step at once, so a per-layer allreduce started in layer_ready overlaps nothing of the backward pass
  // here (only the other layers' allreduces); the simulator models the overlap the paper's Caffe has.

 private:
  static const model::TrainerSetup& checked(const model::TrainerSetup& setup);
  // Runs `work` (real compute), then stretches its wall time in the rank's current step.
  template <class Work>
  auto timed(Work&& work);

  const RankScenario* scenario_;
  std::atomic<std::int64_t> steps_{0};  // forward-backward passes so far, as SimCompute counts them
};

}  // namespace dts::mpi
