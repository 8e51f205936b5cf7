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

// Figures of repeated measurements.
struct Stats {
  double median = 0, min = 0, max = 0;
  int runs = 0;
};
Stats stats_of(std::vector<double> samples);
// "median (min-max)" with `digits` significant digits.
std::string format_stats(const Stats& s, int digits = 3);

}  // namespace dts::bench
