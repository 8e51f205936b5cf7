// Platforms (DESIGN.md §4, platforms/README.md): a JSON description read into a PlatformSpec — nodes joined by
// a cluster network (star, fat tree, dragonfly), each node one device host, or one CPU host plus devices behind
// PCIe switches, or one chip split into groups (KNL partitioning) — or a raw SimGrid XML file; then built into
// SimGrid zones, and the ranks placed on the hosts (the EASGD master on the CPU or on the first device).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/device.hpp"
#include "sim/message_cost_spec.hpp"

namespace dts::sim {

// A multi-device node: devices split evenly over PCIe switches; each device has a PCIe link to its switch,
// each switch an uplink to the CPU (the root complex, where the NIC is). CPU-device traffic crosses the
// uplink and the device's link; device-device traffic under one switch crosses the two device links only.
struct NodeSpec {
  std::optional<Device> cpu;  // none: a self-hosted node, a router stands for the root complex
  int devices = 1;
  int pcie_switches = 1;
  double pcie_bandwidth_bps = 96e9;  // per direction, each link
  double pcie_latency_s = 1e-6;      // each link
  bool data_on_cpu = true;           // the training data is in the CPU's memory: a device copies each minibatch
  CopyModel copy;                    // the CPU's copies to and from the devices (sim/message_cost_spec.hpp)
};

// One chip split into `groups` sub-hosts (papers/easgd_hpc.md §5.8, T8), each with 1 / groups of the chip's
// flops, memory bandwidth and memory, joined by one shared intra-chip link at the chip's memory bandwidth.
struct ChipPartition {
  int groups = 0;  // 0: no partitioning
  Device chip;     // the whole chip; PlatformSpec::device is then one group's share
  double link_latency_s = 0;
};

struct FatTreeSpec {  // SimGrid's "levels;down;up;parallel", bottom-up
  unsigned levels = 1;
  std::vector<unsigned> down{1}, up{1}, parallel{1};
};

struct DragonflySpec {  // SimGrid's "groups,blue;chassis,black;routers,green;nodes"
  unsigned groups = 1, group_links = 1, chassis = 1, chassis_links = 1, routers = 1, router_links = 1;
  unsigned nodes_per_router = 1;
  double router_bandwidth_bps = 0;  // per router-to-router link; 0: as link_bandwidth_bps (SimGrid's single bw)
  double router_latency_s = -1;     // per router-to-router link; < 0: as link_latency_s
};

// Where ranks go. "one_per_host": rank r on the r-th host (node by node: CPU, then devices).
// "workers_on_devices": the ranks before the workers (an EASGD master, a parameter server) on node 0's CPU
// (master "cpu") or its first device (master "device0"); workers on the devices in order.
struct PlacementSpec {
  std::string ranks = "one_per_host";  // one_per_host | workers_on_devices
  std::string master = "cpu";          // cpu | device0
};

struct PlatformSpec {
  std::string name;
  std::string topology = "star";  // star | fat_tree | dragonfly | xml
  int hosts = 0;                  // nodes; 0: as many as the ranks need (star), all leaves (fat tree, dragonfly)
  Device device;                  // each device host
  std::optional<NodeSpec> node;   // multi-device nodes
  ChipPartition partition;
  FatTreeSpec fat_tree;
  DragonflySpec dragonfly;
  PlacementSpec placement;
  // The device of the hosts of the ranks before the workers (a driver, a parameter server) where every rank has
  // its own single-device node: such a host is a CPU host (dts_role "cpu") of this model; none: `device`.
  std::optional<Device> master_device;
  double link_bandwidth_bps = 10e9;  // each NIC (cluster) link
  double link_latency_s = 50e-6;
  std::string sharing = "split_duplex";               // split_duplex | shared | fatpipe | per_connection (star only)
  std::string network_model = "LV08";                 // SimGrid network/model: LV08 | CM02 | SMPI | IB
  std::map<std::string, std::string> simgrid_config;  // extra --cfg items, e.g. network/latency-factor
  MessageOverhead message_overhead;                   // host-side costs of messages (sim/message_cost_spec.hpp)
  NetworkStack network_stack;
  MessageNoise message_noise;
  // > 0: every host is a process on one machine of this many cores (star, one device per node): every CPU
  // execution of every host (compute, updates, message overheads) runs on that machine, one core at most each,
  // so that more busy ranks than cores time-slice (a cluster of ranks on one computer). The device is one core.
  int machine_cores = 0;
  std::string xml_file;     // topology "xml": absolute path
  std::string origin;       // "file:/json/path" of the object, for messages
  nlohmann::json resolved;  // what was read, defaults filled in
};

// Reads a platform object; relative paths (xml, catalogs) resolve against `base_dir`. An object with a "base"
// key is that platform file (relative to `base_dir`) with the other keys merged over it (a JSON merge patch),
// so that an experiment or a variant can change a shipped platform's placement or partitioning.
PlatformSpec read_platform(const nlohmann::json& j, const std::string& file, const std::string& path,
                           const std::string& base_dir);
// Reads a platform file.
PlatformSpec load_platform_file(const std::string& file);

// Configures the network model on the engine, builds the platform, and returns the host of each rank; the
// last `workers` ranks are the training workers (-1: all ranks). Must run once, after the Engine exists and
// before any actor. `before`, if given, is called with the key of each platform setting just before SimGrid
// reads it ("network_model", "simgrid_config/<option>", "xml"): the pre-run check names the one SimGrid refuses.
using StepHook = std::function<void(const std::string& key)>;
std::vector<simgrid::s4u::Host*> build_platform(const PlatformSpec& spec, int ranks, int workers = -1,
                                                const StepHook& before = nullptr);

// The shared machine whose cores run `host`'s executions (machine_cores), or null: the host computes itself.
simgrid::s4u::Host* machine_of(const simgrid::s4u::Host* host);

// The device model of a host built by build_platform: the CPU's on a node's CPU host, `master_device` on a master's
// host, `spec.device` otherwise.
const Device& device_of_host(const PlatformSpec& spec, const simgrid::s4u::Host* host);

// KNL partitioning capacity (§5.8): groups x (weights + data) must fit the chip's memory. Throws a ConfigError
// naming the platform's partition/groups key when not; does nothing without partitioning or a memory size.
void check_partition_capacity(const PlatformSpec& spec, double weight_bytes, double data_bytes);

}  // namespace dts::sim
