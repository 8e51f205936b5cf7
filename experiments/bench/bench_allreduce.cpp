// `dtsim bench allreduce`, under `mpirun -np N`: our ring and tree allreduce (algorithms/collectives; also
// hypercube, BIDMach's grid line round, and MPI_Allreduce itself) on the MPI backend, timed as peers/mpi_allreduce.c
// times MPI_Allreduce (realexec/bench_allreduce_mpi.hpp), and printed in the same columns, so that
// scripts/bench/allreduce_vs_openmpi can put the two side by side.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "core/errors.hpp"
#include "experiments/bench/bench.hpp"
#ifdef DTS_WITH_MPI
#include "realexec/bench_allreduce_mpi.hpp"
#endif

namespace dts::bench {
namespace {

struct AllreduceOptions {
  // The peer's sizes (peers/mpi_allreduce.c): 4 KiB, 64 KiB, 1 MiB, 16 MiB, 100 MB.
  std::vector<std::uint64_t> sizes_bytes = {4096, 65536, 1048576, 16777216, 100000000};
  std::vector<std::string> algos = {"ring", "tree"};
  int reps = 7;
  double budget_s = 2.1;
};

#ifdef DTS_WITH_MPI
mpi::AllreduceBenchSpec spec_of(const AllreduceOptions& o) {
  mpi::AllreduceBenchSpec spec;
  for (const auto b : o.sizes_bytes) {
    if (b == 0 || b % sizeof(float) != 0)
      throw InputError("--sizes", std::to_string(b) + " bytes is not a positive whole number of floats");
  }
  if (o.reps < 1) throw InputError("--reps", "must be at least 1");
  if (!(o.budget_s > 0)) throw InputError("--budget-s", "must be positive");
  spec.sizes_bytes = o.sizes_bytes;
  for (const auto& a : o.algos) {
    if (a != "grid" && a != "mpi") collectives::parse_allreduce_algo(a, "--algos");  // throws for an unknown name
    spec.algos.push_back(a);
  }
  spec.reps = o.reps;
  spec.budget_s = o.budget_s;
  return spec;
}

int run_allreduce(const AllreduceOptions& o) {
  mpi::MpiSession session;
  mpi::AllreduceBenchSpec spec;
  try {
    spec = spec_of(o);
  } catch (const InputError& e) {  // every rank parsed the same arguments: rank 0 speaks for all
    if (session.rank() == 0) std::cerr << "input error: " << e.what() << '\n';
    return 2;
  }
  std::vector<mpi::AllreduceTiming> timings;
  try {
    timings = mpi::time_allreduce(session, spec);
  } catch (const std::exception& e) {  // the other ranks would wait for this one forever
    mpi::MpiSession::abort_job("rank " + std::to_string(session.rank()) + ": error: " + e.what(), 1);
  }
  if (session.rank() != 0) return 0;
  const int P = session.size();
  std::printf("dtsim bench allreduce: ranks=%d reps=%d budget_s=%g comm=MpiComm lib=\"%s\"\n", P, spec.reps,
              spec.budget_s, mpi::MpiSession::library_version().c_str());
  std::printf("%-9s %12s %7s %12s %12s %12s %10s %10s\n", "algo", "bytes", "iters", "t_med_us", "t_min_us", "t_max_us",
              "algbw_GB/s", "busbw_GB/s");
  bool all_ok = true;
  for (const auto& t : timings) {
    const Stats s = stats_of(t.per_call_s);
    const double algbw = static_cast<double>(t.bytes) / s.median / 1e9;
    std::printf("%-9s %12llu %7d %12.1f %12.1f %12.1f %10.3f %10.3f%s\n", t.algo.c_str(),
                static_cast<unsigned long long>(t.bytes), t.iters, s.median * 1e6, s.min * 1e6, s.max * 1e6, algbw,
                algbw * 2.0 * (P - 1) / P, t.result_ok ? "" : "  RESULT-CHECK-FAILED");
    std::fflush(stdout);
    all_ok = all_ok && t.result_ok;
  }
  return all_ok ? 0 : 1;
}
#else
int run_allreduce(const AllreduceOptions&) {
  throw InputError("bench allreduce", "this dtsim was built without MPI (configure with -DDTS_WITH_MPI=ON)");
}
#endif

}  // namespace

Command add_bench_allreduce(CLI::App& bench) {
  auto o = std::make_shared<AllreduceOptions>();
  CLI::App* app = bench.add_subcommand("allreduce",
                                       "our ring, tree, hypercube and auto allreduce on the MPI backend, timed as "
                                       "peers/mpi_allreduce.c times MPI_Allreduce; run "
                                       "under mpirun -np N");
  app->add_option("--sizes", o->sizes_bytes, "message sizes in bytes, comma-separated (default: the peer's)")
      ->delimiter(',');
  app->add_option("--algos", o->algos,
                  "ring, tree, hypercube, auto (Open MPI's fixed choice: the hypercube below 10,000 bytes), grid "
                  "(BIDMach's line round over all ranks, quorums 1), mpi (MPI_Allreduce "
                  "in these processes, as the peer calls it); comma-separated")
      ->delimiter(',');
  app->add_option("--reps", o->reps, "repetitions per size (default 7)");
  app->add_option("--budget-s", o->budget_s, "seconds per size and algorithm over all repetitions (default 2.1)");
  return {app, [o] { return run_allreduce(*o); }};
}

}  // namespace dts::bench
