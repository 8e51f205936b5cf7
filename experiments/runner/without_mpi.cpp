// `dtsim run --backend mpi` in a build without MPI (DTS_WITH_MPI=OFF).
#include "core/errors.hpp"
#include "experiments/runner/run.hpp"

namespace dts::exp {

int run_experiment_mpi(const RunOptions& /*opt*/) {
  throw InputError("--backend mpi", "this dtsim was built without MPI (configure with -DDTS_WITH_MPI=ON)");
}

}  // namespace dts::exp
