// The list of benches. Each line is one bench_<name>.cpp's subcommand.
#include "experiments/bench/bench.hpp"

namespace dts::bench {

std::vector<Command> add_bench_commands(CLI::App& bench) {
  std::vector<Command> commands;
  commands.push_back(add_bench_allreduce(bench));
  commands.push_back(add_kernels_bench(bench));
#ifdef DTS_WITH_SIM  // the simulator's benches
  commands.push_back(add_overhead_bench(bench));
  commands.push_back(add_scale_bench(bench));
#endif
  return commands;
}

}  // namespace dts::bench
