// What every training algorithm receives, and the registry that maps experiment names to algorithms.
// An algorithm is a function run once per rank, as straight-line blocking code against the seam.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/node.hpp"
#include "algorithms/api/recorder.hpp"
#include "core/config_reader.hpp"

namespace dts {

struct Context {
  Comm& comm;
  Compute& compute;
  Node& node;
  Recorder& recorder;
  int workers = 1;         // training workers (ranks may include servers besides them)
  std::int64_t steps = 1;  // local training steps per worker
};

using RankMain = std::function<void(Context&)>;

struct AlgorithmSpec {
  std::string name;
  std::string summary;
  // Ranks needed for `workers` training workers (a parameter server or EASGD center adds ranks).
  std::function<int(int workers)> ranks;
  // Reads the algorithm's own keys (strictly, defaults recorded in reader.resolved()) and returns the code
  // every rank runs. Keys common to all algorithms (name, workers, batch_size, optimizer) are read by the
  // runner before.
  std::function<RankMain(ConfigReader& reader, int workers)> configure;
};

// Throws ConfigError naming `where` on an unknown name.
const AlgorithmSpec& find_algorithm(const std::string& name, const std::string& where);
std::vector<std::string> algorithm_names();

// Tags of the algorithms: each algorithm file uses its own block so a trace tells them apart.
namespace tags {
inline constexpr Tag kCollective = 1000;  // + a per-call offset inside collectives
inline constexpr Tag kEasgd = 2000;
inline constexpr Tag kEasgdOriginal = 3000;
inline constexpr Tag kEasgdHogwild = 4000;
inline constexpr Tag kEasgdSync = 5000;
inline constexpr Tag kAsyncSgd = 6000;
inline constexpr Tag kHogwildSgd = 7000;
inline constexpr Tag kSyncSgd = 8000;
inline constexpr Tag kGossipSgd = 9000;
}  // namespace tags

}  // namespace dts
