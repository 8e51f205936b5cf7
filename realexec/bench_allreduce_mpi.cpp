// The allreduce timing loop of peers/mpi_allreduce.c, around dtsim's collectives on an MpiComm.
#include "realexec/bench_allreduce_mpi.hpp"

#include <algorithm>
#include <functional>
#include <span>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/quorum_allreduce.hpp"
#include "realexec/mpi_check.hpp"
#include "realexec/mpi_comm.hpp"

namespace dts::mpi {
namespace {

constexpr Tag kBenchTag = 1000;
constexpr int kMaxIters = 1000;

double max_over_ranks(double value) {
  double out = 0;
  DTS_MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

}  // namespace

std::vector<AllreduceTiming> time_allreduce(const MpiSession& session, const AllreduceBenchSpec& spec) {
  DTS_ASSERT(spec.reps >= 1 && spec.budget_s > 0, "time_allreduce: reps >= 1 and budget_s > 0");
  std::uint64_t max_bytes = 0;
  for (const auto b : spec.sizes_bytes) {
    DTS_ASSERT(b > 0 && b % sizeof(float) == 0, "time_allreduce: sizes are positive multiples of 4 bytes");
    max_bytes = std::max(max_bytes, b);
  }
  MpiComm comm(session);
  CollectiveOnlyCompute compute;  // the additions cost what they cost on this CPU
  const Group everyone = Group::range(0, comm.size());
  const int P = comm.size();
  const float expect = static_cast<float>(P * (P + 1) / 2);
  std::vector<float> buffer(max_bytes / sizeof(float)), mpi_result(buffer.size());
  Round round = 0;  // grid: every call a round of its own, on tags of its own (it gives up their old rounds)
  collectives::QuorumBuffers grid_buffers;

  std::vector<AllreduceTiming> out;
  for (const auto bytes : spec.sizes_bytes) {
    const std::size_t n = bytes / sizeof(float);
    const Slice data(std::span<float>(buffer).first(n));
    for (const std::string& algo : spec.algos) {
      std::function<void()> call;
      float want = expect;
      std::span<const float> result = data.data;
      if (algo == "mpi") {  // the peer's call, out of place, in these processes
        result = std::span<const float>(mpi_result).first(n);
        call = [&] {
          DTS_MPI_CHECK(MPI_Allreduce(data.data.data(), mpi_result.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                                      MPI_COMM_WORLD));
        };
      } else if (algo == "grid") {
        want = expect * (1.0f / static_cast<float>(P));  // a mean; exact for rank + 1 at small P
        call = [&] {
          collectives::quorum_allreduce(comm, &compute, everyone, data, {kBenchTag + 1, kBenchTag + 2}, ++round, {},
                                        std::nullopt, &grid_buffers);  // as BIDMach's loop keeps them
        };
      } else {
        call = [&, kind = collectives::parse_allreduce_algo(algo, "--algos")] {
          collectives::allreduce(kind, comm, compute, everyone, data, kBenchTag);
        };
      }
      AllreduceTiming t;
      t.algo = algo;
      t.bytes = bytes;
      // 1. Warm-up 1 on rank + 1 everywhere, checked: every element must be P (P + 1) / 2 exactly (the mean for
      //    grid).
      std::fill(data.data.begin(), data.data.end(), static_cast<float>(comm.rank() + 1));
      call();
      const bool ok = std::all_of(result.begin(), result.end(), [&](float v) { return v == want; });
      t.result_ok = session.min_over_ranks(ok ? 1 : 0) == 1;
      // 2. Warm-up 2 on zeros, which stay zeros however often they are summed.
      std::fill(data.data.begin(), data.data.end(), 0.0f);
      call();
      // 3. Calibration: one call, maximum over ranks, gives the calls per repetition.
      session.barrier();
      double t0 = MPI_Wtime();
      call();
      const double t_cal = max_over_ranks(MPI_Wtime() - t0);
      t.iters = std::clamp(static_cast<int>(spec.budget_s / spec.reps / std::max(t_cal, 1e-7)), 1, kMaxIters);
      // 4. Repetitions: barrier, `iters` back-to-back calls, mean per call, maximum over ranks.
      for (int r = 0; r < spec.reps; ++r) {
        session.barrier();
        t0 = MPI_Wtime();
        for (int i = 0; i < t.iters; ++i) call();
        t.per_call_s.push_back(max_over_ranks((MPI_Wtime() - t0) / t.iters));
      }
      out.push_back(std::move(t));
    }
  }
  comm.quiesce();
  return out;
}

}  // namespace dts::mpi
