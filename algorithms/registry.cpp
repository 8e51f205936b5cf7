// The algorithm registry: one line per algorithm. Explicit (no static self-registration), so that a
// static library never drops an algorithm the linker thinks unused.
#include <algorithm>

#include "algorithms/algorithm.hpp"

namespace dts {

AlgorithmSpec allreduce_sgd_spec();
AlgorithmSpec easgd_async_spec();
AlgorithmSpec easgd_original_spec();
AlgorithmSpec measgd_async_spec();
AlgorithmSpec easgd_hogwild_spec();
AlgorithmSpec easgd_sync_spec();
AlgorithmSpec async_sgd_spec();
AlgorithmSpec async_msgd_spec();
AlgorithmSpec hogwild_sgd_spec();
AlgorithmSpec sync_sgd_spec();
AlgorithmSpec gossip_sgd_spec();
AlgorithmSpec elastic_gossip_spec();
AlgorithmSpec gossip_pull_spec();
AlgorithmSpec gossip_push_spec();
AlgorithmSpec gosgd_spec();
AlgorithmSpec no_comm_spec();
AlgorithmSpec gossipgrad_spec();
AlgorithmSpec agd_spec();
AlgorithmSpec ps_sync_spec();
AlgorithmSpec ps_async_spec();
AlgorithmSpec bidmach_grid_spec();
AlgorithmSpec mpca_spec();
AlgorithmSpec sparknet_avg_spec();
AlgorithmSpec easgd_driver_spec();
AlgorithmSpec ps_sharded_spec();
AlgorithmSpec microbench_spec();

namespace {
const std::vector<AlgorithmSpec>& registry() {
  static const std::vector<AlgorithmSpec> specs = {
      allreduce_sgd_spec(), easgd_async_spec(), easgd_original_spec(), measgd_async_spec(),
      easgd_hogwild_spec(), easgd_sync_spec(),  async_sgd_spec(),      async_msgd_spec(),
      hogwild_sgd_spec(),   sync_sgd_spec(),    gossip_sgd_spec(),     elastic_gossip_spec(),
      gossip_pull_spec(),   gossip_push_spec(), gosgd_spec(),          no_comm_spec(),
      gossipgrad_spec(),    agd_spec(),         ps_sync_spec(),        ps_async_spec(),
      bidmach_grid_spec(),  mpca_spec(),        sparknet_avg_spec(),   easgd_driver_spec(),
      ps_sharded_spec(),    microbench_spec(),
  };
  return specs;
}
}  // namespace

const AlgorithmSpec& find_algorithm(const std::string& name, const std::string& where) {
  for (const auto& s : registry()) {
    if (s.name == name) return s;
  }
  std::string known;
  for (const auto& n : algorithm_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError(where, "unknown algorithm \"" + echo(name) + "\" (known: " + known + ")");
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& s : registry()) names.push_back(s.name);
  return names;
}

}  // namespace dts
