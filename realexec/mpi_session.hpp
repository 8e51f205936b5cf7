// The MPI library for this process: MPI_Init_thread on construction, MPI_Finalize on destruction, and the
// few world-level operations the runner needs (agreeing on an exit code, gathering results on rank 0,
// aborting the job), so that no code outside realexec/ includes <mpi.h>. MPI can be initialized only once
// per process: create one MpiSession, in main's scope, before any MpiComm.
#pragma once

#include <string>
#include <vector>

#include "core/no_copy.hpp"

namespace dts::mpi {

class MpiSession : NoCopy {
 public:
  // Requests MPI_THREAD_MULTIPLE and throws CommError if the library does not provide it: a rank's spawned
  // activities (std::threads) call MPI concurrently with its main activity (MpiComm serializes its own calls
  // on a mutex, but MPI_Wtime and other communicators do not go through it).
  MpiSession();
  ~MpiSession();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Collective over MPI_COMM_WORLD.
  void barrier() const;
  int max_over_ranks(int value) const;
  int min_over_ranks(int value) const;
  // Rank 0 gets every rank's string, in rank order; the other ranks get an empty vector.
  std::vector<std::string> gather_on_root(const std::string& mine) const;

  // Prints `message` on stderr and ends the whole job (MPI_Abort on MPI_COMM_WORLD): mpirun kills every
  // rank and exits with `code`. For failures at a rank boundary, where the other ranks would otherwise
  // wait forever for this one.
  [[noreturn]] static void abort_job(const std::string& message, int code);
  // "Open MPI v4.1.4, ..." (first line of MPI_Get_library_version), for config.resolved.json.
  static std::string library_version();

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace dts::mpi
