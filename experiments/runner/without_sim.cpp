// `dtsim run --backend sim` in a build without the simulator (DTS_WITH_SIM=OFF).
#include "core/errors.hpp"
#include "experiments/runner/run.hpp"

namespace dts::exp {

int run_experiment(const RunOptions& /*opt*/) {
  throw InputError("--backend sim",
                   "this dtsim was built without the simulator (configure with -DDTS_WITH_SIM=ON); "
                   "--backend mpi runs the experiment on MPI");
}

}  // namespace dts::exp
