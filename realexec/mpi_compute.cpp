// MpiCompute: the Trainer's kernels, size checks as in sim/sim_compute.cpp.
#include "realexec/mpi_compute.hpp"

namespace dts::mpi {

const model::TrainerSetup& MpiCompute::checked(const model::TrainerSetup& setup) {
  if (!setup.real) {
    throw InputError("model.numerics", "modeled numerics run no kernels; the MPI backend needs \"real\"");
  }
  return setup;
}

MpiCompute::MpiCompute(const model::TrainerSetup& setup, Rank rank) : trainer_(checked(setup), rank) {}

void MpiCompute::init_params(Slice params) {
  DTS_ASSERT(params.count == num_params() && params.data.size() == params.count, "init_params: wrong size");
  trainer_.init_params(params.data);
}

float MpiCompute::forward_backward(ConstSlice params, Slice grads) {
  DTS_ASSERT(trainer_.has_shard(), "forward_backward on a rank without a data shard (a server)");
  DTS_ASSERT(params.count == num_params() && grads.count == num_params(), "forward_backward: wrong size");
  return trainer_.forward_backward(params.data, grads.data);
}

void MpiCompute::optimizer_step(Slice params, ConstSlice grads) {
  DTS_ASSERT(params.count == num_params() && grads.count == num_params(), "optimizer_step: wrong size");
  trainer_.optimizer_step(params.data, grads.data);
}

}  // namespace dts::mpi
