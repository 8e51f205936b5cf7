// Platforms: a JSON description (a star cluster of hosts with one NIC link each, a device per host, the
// network model) or a raw SimGrid XML file, turned into SimGrid hosts, one per rank (DESIGN.md §4).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>

#include "sim/device.hpp"

namespace dts::sim {

struct PlatformSpec {
  std::string name;
  std::string topology = "star";  // star | xml
  int hosts = 0;                  // 0: one host per rank
  Device device;
  double link_bandwidth_bps = 10e9;
  double link_latency_s = 50e-6;
  std::string sharing = "split_duplex";  // split_duplex | shared | fatpipe
  std::string network_model = "LV08";    // SimGrid network/model: LV08 | CM02 | SMPI | IB
  std::map<std::string, std::string> simgrid_config;  // extra --cfg items, e.g. network/latency-factor
  std::string xml_file;                               // topology "xml": absolute path
  nlohmann::json resolved;                            // what was read, defaults filled in
};

// Reads a platform object; relative paths (xml, device catalog) resolve against `base_dir`.
PlatformSpec read_platform(const nlohmann::json& j, const std::string& file, const std::string& path,
                           const std::string& base_dir);
// Reads a platform file.
PlatformSpec load_platform_file(const std::string& file);

// Configures the network model on the engine, builds the platform, and returns the host of each rank.
// Must run once, after the Engine exists and before any actor.
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int ranks);

}  // namespace dts::sim
