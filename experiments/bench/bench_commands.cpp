// The list of benches. Each line is one bench_<name>.cpp's subcommand.
#include "experiments/bench/bench.hpp"

namespace dts::bench {

Command add_bench_allreduce(CLI::App& bench);  // bench_allreduce.cpp

std::vector<Command> add_bench_commands(CLI::App& bench) {
  std::vector<Command> commands;
  commands.push_back(add_bench_allreduce(bench));
  return commands;
}

}  // namespace dts::bench
