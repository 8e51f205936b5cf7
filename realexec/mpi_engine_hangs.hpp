// The texts of the engine's hang errors (realexec/mpi_engine.cpp): who was waited for, and which peers were
// silent. Internal to the MPI backend.
#pragma once

#include <string>
#include <vector>

#include "realexec/mpi_engine.hpp"

namespace dts::mpi::hangs {

// "rank 2", "ranks 0 and 2", "ranks 1-4", "ranks 0, 2 and 5-7".
std::string ranks_text(std::vector<Rank> ranks);
// The peers an operation waits for.
std::vector<Rank> peers_of(const Op& op);
// "a message from rank 2 (tag 7)", "a message from one of ranks 1-4 (tag 7)", "rank 2 to take a message (tag 7)".
std::string describe(const Op& op);
// "waited 300 s for WHAT with no progress: SUSPECTS have hung or died, ..." (no suspects: "a peer has").
std::string no_progress_message(double waited_s, const std::string& what, const std::vector<Rank>& suspects);

}  // namespace dts::mpi::hangs
