// `dtsim bench NAME`: commands that print figures (median, min and max of several runs), for people, and for
// CI only as a smoke run. Each bench_<name>.cpp adds its own subcommand; bench_commands.cpp lists them.
// Benches never assert a speed: they measure and print, side by side with the peer they are compared to.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace dts::bench {

// Runs a parsed bench and returns the exit code; errors are thrown as everywhere in dtsim (InputError: exit 2).
using Runner = std::function<int()>;
struct Command {
  CLI::App* app = nullptr;
  Runner run;
};

// Adds every bench as a subcommand of `bench`.
std::vector<Command> add_bench_commands(CLI::App& bench);
// The benches (bench_<name>.cpp).
Command add_bench_allreduce(CLI::App& bench);  // our allreduce on MPI, timed as peers/mpi_allreduce.c
Command add_kernels_bench(CLI::App& bench);    // our kernels' training throughput against PyTorch
Command add_overhead_bench(CLI::App& bench);   // simulated real-numerics runs against the same bare steps
Command add_scale_bench(CLI::App& bench);      // wall s per simulated iteration and memory at scale, SMPI beside

// Figures of repeated measurements.
struct Stats {
  double median = 0, min = 0, max = 0;
  int runs = 0;
};
Stats stats_of(std::vector<double> samples);
// "median (min-max)" with `digits` significant digits.
std::string format_stats(const Stats& s, int digits = 3);

// What the rest of the machine did during a timing window (the VM is shared, peers/README.md): busy cores
// not explained by this process's own CPU time, from /proc/stat and getrusage (as peers/anchors_common.py's
// WindowProbe). A window of T threads is uncontended when others < ncpu - T + 0.2.
class LoadProbe {
 public:
  LoadProbe();
  double other_busy_cores() const;
  static int cpus();

 private:
  double t0_s_ = 0, self0_s_ = 0;
  unsigned long long total0_ = 0, idle0_ = 0;
};
bool uncontended(double other_busy_cores, int threads);

// Runs a shell command and returns its standard output; `code` gets the exit status (-1 if it did not exit).
std::string capture(const std::string& command, int& code);

}  // namespace dts::bench
