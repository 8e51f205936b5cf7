// Thrown out of a failed rank's calls into the MPI backend (a scenario failure, Engine::fail_at), to end its
// algorithm's main and activities where the failure finds them, as sim::RankGone does on the simulator; the
// runner (experiments/runner_mpi/run_mpi.cpp) and MpiNode's activities catch it. Not a std::exception:
// algorithms must not catch it.
#pragma once

namespace dts::mpi {

struct RankGone {};

}  // namespace dts::mpi
