// Sums of double vectors over some of the job's ranks, started without waiting and collected later
// (MPI_Ireduce on a communicator of those ranks): the MPI side of Recorder::observe, where a rank that waited
// for the others at every observation could deadlock an asynchronous algorithm whose peers need it first.
// A member that failed (a scenario failure) starts no more sums; finish() completes the sums it missed with
// no share of it, and those sums are dropped, as the simulator records no step that a worker did not observe.
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
  // A member starts its share of the sum named `key`; every member starts the same keys in the same order,
  // except that a member that failed stops early (its keys are the first of the others').
  void start(std::int64_t key, std::vector<double> mine);
  // The sums of every member's share completed so far (root: key and sum; other members: nothing), without
  // blocking.
  std::vector<std::pair<std::int64_t, std::vector<double>>> poll();
  // Collective over the members, once each has stopped starting sums: the members agree on the keys started,
  // a member that started fewer starts the rest with no share, and every sum completes. Returns the sums of
  // every member's share that poll had not; a sum that lacks a member's share is dropped.
  std::vector<std::pair<std::int64_t, std::vector<double>>> finish();

 private:
  struct State;  // MPI handles, kept out of this header (mpi_check.hpp is realexec's one <mpi.h>)
  std::unique_ptr<State> state_;
};

}  // namespace dts::mpi
