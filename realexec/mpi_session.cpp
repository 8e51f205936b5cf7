// MpiSession: initialization, world-level collectives for the runner, and job abort.
#include "realexec/mpi_session.hpp"

#include <dlfcn.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "realexec/mpi_check.hpp"

namespace dts::mpi {

namespace {
// libsimgrid exports MPI_* as well (SMPI); if it comes first in the process's symbol lookup, MPI_Init_thread
// is SimGrid's, which aborts with "not properly initialized". realexec/CMakeLists.txt links the MPI library
// first; this catches a build that did not.
void check_mpi_is_not_smpi() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) == 0 || info.dli_fname == nullptr) return;
  if (std::string_view(info.dli_fname).find("simgrid") != std::string_view::npos) {
    throw CommError(std::string("MPI_Init_thread resolves to ") + info.dli_fname +
                    " (SimGrid's SMPI), not to the MPI library: link the MPI library before SimGrid");
  }
}

// Rounds and messages allocate and free payload-sized buffers again and again (the engine's send snapshots,
// staged messages and landing buffers; a collective's per-round buffers, such as the grid round's three
// copies of the vector). glibc serves a block above 128 KB with mmap and gives the heap's free top back to the
// kernel once it passes 128 KB, so each round unmapped its buffers and faulted fresh zeroed pages in for the
// next: page faults and TLB shootdowns that cost milliseconds per round on this VM (`dtsim bench allreduce
// --algos grid`: 6 ms for 320 KB on 2 ranks, against 0.35 ms for the ring; README.md, "dtsim bench
// allreduce"). Blocks up to glibc's largest mmap threshold (32 MiB) come from the heap instead, and 64 MiB of
// freed heap top stay mapped for the next round. Set before MPI_Init, so that a transport that needs its own
// settings (registration caches) overrides these. Under a sanitizer mallopt is a no-op, harmlessly.
void keep_freed_memory() {
#if defined(__GLIBC__)
  constexpr int kMiB = 1 << 20;
  mallopt(M_MMAP_THRESHOLD, 32 * kMiB);
  mallopt(M_TOP_PAD, 64 * kMiB);
  mallopt(M_TRIM_THRESHOLD, 128 * kMiB);
#endif
}

// Open MPI's shared-memory transport (vader) sends a message eagerly only up to 4 KiB including its header,
// so a 4 KiB payload, the smallest gradient bucket a user meets, took the rendezvous protocol. With every
// receive staged by the engine (mpi_engine.cpp) that costs a round trip more than MPI's pre-posted receive:
// a 4 KiB exchange took 4.9 us against 3.1 us for 4,000 bytes (`dtsim bench allreduce --algos hypercube`).
// Eager up to 8 KiB here (an MCA default: a user's OMPI_MCA_btl_vader_eager_limit or mpirun --mca wins).
void small_messages_eager() { setenv("OMPI_MCA_btl_vader_eager_limit", "8192", 0); }
}  // namespace

MpiSession::MpiSession() {
  check_mpi_is_not_smpi();
  keep_freed_memory();
  small_messages_eager();
  int provided = 0;
  DTS_MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided));
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw CommError("the MPI library does not provide MPI_THREAD_MULTIPLE (got level " + std::to_string(provided) +
                    "); dtsim's MPI backend runs communication threads and needs it");
  }
  // Errors come back as codes, turned into CommError by DTS_MPI_CHECK, instead of aborting inside MPI.
  DTS_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  DTS_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  DTS_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::barrier() const { DTS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

int MpiSession::max_over_ranks(int value) const {
  int out = 0;
  DTS_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

int MpiSession::min_over_ranks(int value) const {
  int out = 0;
  DTS_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return out;
}

std::vector<std::string> MpiSession::gather_on_root(const std::string& mine) const {
  DTS_ASSERT(mine.size() <= static_cast<std::size_t>(INT32_MAX), "gather_on_root: more than 2 GB from one rank");
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  DTS_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  std::vector<int> displs(lens.size());
  long long total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = static_cast<int>(total);
    total += lens[i];
  }
  DTS_ASSERT(total <= INT32_MAX, "gather_on_root: more than 2 GB in all");
  std::string all(static_cast<std::size_t>(total), '\0');
  DTS_MPI_CHECK(
      MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i)
    out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
  return out;
}

void MpiSession::abort_job(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it ever does
}

std::string MpiSession::library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string v(buf, static_cast<std::size_t>(len));
  return v.substr(0, v.find_first_of(",\n"));
}

}  // namespace dts::mpi
