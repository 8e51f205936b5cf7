// Sums of double vectors over some of the job's ranks, started without waiting and collected later
// (MPI_Ireduce on a communicator of those ranks): the MPI side of Recorder::observe, where a rank that waited
// for the others at every observation could deadlock an asynchronous algorithm whose peers need it first.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/no_copy.hpp"

namespace dts::mpi {

class VectorSums : NoCopy {
 public:
  // Collective over MPI_COMM_WORLD: every rank constructs it; `member` says whether this rank takes part.
  // The root is the member of lowest world rank.
  explicit VectorSums(bool member);
  ~VectorSums();
  bool root() const;
  // A member starts its share of the sum named `key`; every member starts the same keys in the same order.
  void start(std::int64_t key, std::vector<double> mine);
  // The sums completed so far (root: key and sum; other members: nothing), without blocking.
  std::vector<std::pair<std::int64_t, std::vector<double>>> poll();
  // Waits for every started sum and returns those poll had not: call once the algorithm has returned.
  std::vector<std::pair<std::int64_t, std::vector<double>>> finish();

 private:
  struct State;  // MPI handles, kept out of this header (mpi_check.hpp is realexec's one <mpi.h>)
  std::unique_ptr<State> state_;
};

}  // namespace dts::mpi
