// The seam's Compute on real processes: the rank's model::Trainer (the same network, shard, minibatch order
// and optimizer as in the simulator), with wall time passing by itself. Real numerics only: modeled numerics
// have no kernels to run, so they are an input error here (the runner says so, naming the key).
#pragma once

#include "algorithms/api/trainer_compute.hpp"

namespace dts::mpi {

class MpiCompute final : public TrainerCompute {
 public:
  // Throws InputError when setup.real is false.
  MpiCompute(const model::TrainerSetup& setup, Rank rank);
  float forward_backward(ConstSlice params, Slice grads) override { return train(params, grads); }
  void optimizer_step(Slice params, ConstSlice grads) override { update(params, grads); }
  // Nothing to charge: the caller's loop over the floats takes the time it takes.
  void charge_elementwise(std::size_t /*n*/, int /*streams*/) override {}

 private:
  static const model::TrainerSetup& checked(const model::TrainerSetup& setup);
};

}  // namespace dts::mpi
