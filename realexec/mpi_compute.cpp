// MpiCompute: the Trainer's kernels (algorithms/api/trainer_compute.hpp), real numerics only.
#include "realexec/mpi_compute.hpp"

namespace dts::mpi {

const model::TrainerSetup& MpiCompute::checked(const model::TrainerSetup& setup) {
  if (!setup.real) {
    throw InputError("model.numerics", "modeled numerics run no kernels; the MPI backend needs \"real\"");
  }
  return setup;
}

MpiCompute::MpiCompute(const model::TrainerSetup& setup, Rank rank) : TrainerCompute(checked(setup), rank) {}

}  // namespace dts::mpi
