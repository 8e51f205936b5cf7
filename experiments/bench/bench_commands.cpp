// The list of benches. Each line is one bench_<name>.cpp's subcommand.
#include "experiments/bench/bench.hpp"

namespace dts::bench {

std::vector<Command> add_bench_commands(CLI::App& bench) {
  std::vector<Command> commands;
  (void)bench;
  return commands;
}

}  // namespace dts::bench
