// The seam's Compute on real processes: the rank's model::Trainer (the same network, shard, minibatch order
// and optimizer as in the simulator), with wall time passing by itself. Real numerics only: modeled numerics
// have no kernels to run, so they are an input error here (the runner says so, naming the key).
#pragma once

#include "algorithms/api/compute.hpp"
#include "algorithms/api/request.hpp"
#include "kernels/model/trainer.hpp"

namespace dts::mpi {

class MpiCompute final : public Compute {
 public:
  // Throws InputError when setup.real is false.
  MpiCompute(const model::TrainerSetup& setup, Rank rank);
  std::size_t num_params() const override { return trainer_.num_params(); }
  bool real() const override { return true; }
  std::vector<model::ParamBlock> param_blocks() const override { return trainer_.param_blocks(); }
  void init_params(Slice params) override;
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  // Nothing to charge: the caller's loop over the floats takes the time it takes.
  void charge_elementwise(std::size_t /*n*/, int /*streams*/) override {}

 private:
  static const model::TrainerSetup& checked(const model::TrainerSetup& setup);
  model::Trainer trainer_;
};

}  // namespace dts::mpi
