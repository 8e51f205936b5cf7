// Platform reading: strict, every key named by its JSON path (platforms/README.md lists them). Link presets
// (platforms/links.json: the alpha-beta rows of papers/easgd_hpc.md Table 2) fill the NIC link's bandwidth and
// latency and select a pure alpha-beta network model; explicit keys win over a preset.
#include "sim/platform.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/config_reader.hpp"

namespace fs = std::filesystem;

namespace dts::sim {
namespace {

constexpr std::size_t kMaxBaseChain = 16;  // platform files chained by "base"

std::string resolve(const std::string& base_dir, const std::string& p) {
  const fs::path path(p);
  return path.is_absolute() ? p : (fs::path(base_dir) / path).lexically_normal().string();
}

nlohmann::json device_json(const Device& d) {
  return {{"name", d.name},
          {"peak_flops", d.peak_flops},
          {"mem_bw_Bps", d.mem_bw_Bps},
          {"efficiency", d.efficiency},
          {"update_efficiency", d.efficiency_of(WorkKind::kUpdate)},
          {"reduce_efficiency", d.efficiency_of(WorkKind::kReduce)},
          {"thread_scaling",
           {{"serial_fraction", d.thread_scaling.serial_fraction}, {"contention", d.thread_scaling.contention}}},
          {"cores", d.cores},
          {"memory_bytes", d.memory_bytes},
          {"source", d.source}};
}

// A device given by catalog name or as an inline object, under `key`; an inline object with a "base" is that
// catalog device with the object's keys over its figures.
Device read_device_key(ConfigReader& r, const std::string& key, const std::string& catalog) {
  if (r.has(key) && r.raw(key).is_object()) {
    ConfigReader d = r.child(key);
    std::optional<Device> base;
    if (d.has("base")) base = find_device(catalog, d.require_string("base"), d.where("base"));
    Device dev = base ? read_device(d, base->name, &*base) : read_device(d, "inline");
    r.resolved()[key] = d.resolved();
    return dev;
  }
  const std::string name = r.require_string(key);
  return find_device(catalog, name, r.where(key));
}

std::vector<unsigned> read_counts(ConfigReader& r, const std::string& key, std::size_t n) {
  if (!r.has(key)) r.fail(key, "required key is missing");
  const auto& a = r.raw(key);
  if (!a.is_array() || a.size() != n) r.fail(key, "expected an array of " + std::to_string(n) + " positive integers");
  std::vector<unsigned> out;
  for (const auto& x : a) {
    if (!x.is_number_integer() || x.get<std::int64_t>() < 1 || x.get<std::int64_t>() > 1 << 16) {
      r.fail(key, "expected positive integers, got " + echo_json(x));
    }
    out.push_back(x.get<unsigned>());
  }
  r.resolved()[key] = a;
  return out;
}

unsigned positive(ConfigReader& r, const std::string& key, unsigned def) {
  return static_cast<unsigned>(r.integer(key, def, 1, 1 << 16));
}

void read_topology(ConfigReader& r, PlatformSpec& p) {
  if (p.topology == "fat_tree") {
    ConfigReader f = r.child("fat_tree");
    p.fat_tree.levels = positive(f, "levels", 1);
    p.fat_tree.down = read_counts(f, "down", p.fat_tree.levels);
    p.fat_tree.up = read_counts(f, "up", p.fat_tree.levels);
    p.fat_tree.parallel = read_counts(f, "parallel", p.fat_tree.levels);
    f.finish();
    r.resolved()["fat_tree"] = f.resolved();
    unsigned leaves = 1;
    for (unsigned d : p.fat_tree.down) leaves *= d;
    if (p.hosts != 0 && p.hosts != static_cast<int>(leaves)) {
      r.fail("hosts", "a fat tree with these down counts has " + std::to_string(leaves) + " nodes (or give 0)");
    }
  } else if (p.topology == "dragonfly") {
    ConfigReader d = r.child("dragonfly");
    DragonflySpec& s = p.dragonfly;
    s.groups = positive(d, "groups", 1);
    s.group_links = positive(d, "group_links", 1);
    s.chassis = positive(d, "chassis", 1);
    s.chassis_links = positive(d, "chassis_links", 1);
    s.routers = positive(d, "routers", 1);
    s.router_links = positive(d, "router_links", 1);
    s.nodes_per_router = positive(d, "nodes_per_router", 1);
    s.router_bandwidth_bps = d.number("router_bandwidth_bps", 0, 0, 1e15);
    s.router_latency_s = d.number("router_latency_s", -1, -1, 10);
    // SimGrid routes to group g through router g of each chassis (DragonflyZone: the blue link of router g).
    if (s.groups > s.routers)
      d.fail("groups", "SimGrid's dragonfly needs at most as many groups as routers per chassis");
    d.finish();
    r.resolved()["dragonfly"] = d.resolved();
    const unsigned leaves = s.groups * s.chassis * s.routers * s.nodes_per_router;
    if (p.hosts != 0 && p.hosts != static_cast<int>(leaves)) {
      r.fail("hosts", "this dragonfly has " + std::to_string(leaves) + " nodes (or give 0)");
    }
  }
}

void read_node(ConfigReader& r, PlatformSpec& p, const std::string& catalog) {
  if (r.has("node")) {
    ConfigReader n = r.child("node");
    NodeSpec node;
    if (n.has("cpu") && n.raw("cpu").is_null()) {
      n.resolved()["cpu"] = nullptr;
    } else {
      node.cpu = read_device_key(n, "cpu", catalog);
      n.resolved()["cpu_resolved"] = device_json(*node.cpu);
    }
    node.devices = static_cast<int>(n.integer("devices", 1, 1, 1024));
    node.pcie_switches = static_cast<int>(n.integer("pcie_switches", 1, 1, 1024));
    if (node.devices % node.pcie_switches != 0) n.fail("pcie_switches", "must divide node.devices");
    node.pcie_bandwidth_bps = n.number("pcie_bandwidth_bps", 96e9, 1e3, 1e15);
    node.pcie_latency_s = n.number("pcie_latency_s", 1e-6, 0, 10);
    node.data_on_cpu = n.boolean("data_on_cpu", true);
    node.copy = read_copy_model(n);
    if (node.copy.given && !node.cpu) n.fail("copy", "copies go through a node CPU's memory; this node has none");
    n.finish();
    r.resolved()["node"] = n.resolved();
    p.node = node;
  }
  if (r.has("chip_partition")) {
    ConfigReader c = r.child("chip_partition");
    p.partition.groups = static_cast<int>(c.integer("groups", 1, 1, 1024));
    p.partition.link_latency_s = c.number("link_latency_s", 0, 0, 10);
    c.finish();
    r.resolved()["chip_partition"] = c.resolved();
    if (p.node) r.fail("chip_partition", "a platform has either node or chip_partition, not both");
    p.partition.chip = p.device;
    p.device = split_device(p.device, p.partition.groups);
  }
}

// Link preset: fills the NIC link's defaults from the catalog. Returns whether one was given.
bool read_link_preset(ConfigReader& r, const std::string& base_dir, double& bw_bps, double& lat_s) {
  if (!r.has("link_preset")) {
    r.string("link_catalog", "links.json");
    return false;
  }
  const std::string catalog = resolve(base_dir, r.string("link_catalog", "links.json"));
  const std::string name = r.require_string("link_preset");
  ConfigReader root(read_json_file(catalog, "link catalog"), catalog, "");
  ConfigReader links = root.child("links");
  if (!links.has(name)) r.fail("link_preset", "unknown link preset \"" + echo(name) + "\" (not in " + catalog + ")");
  ConfigReader e = links.child(name);
  bw_bps = e.require_number("bandwidth_bps", 1e3, 1e15);
  // The preset's alpha is end to end; a route between two nodes crosses two NIC links.
  lat_s = e.require_number("alpha_s", 0, 10) / 2;
  e.string("source", "");
  e.finish();
  return true;
}

// `chain`: the platform files already opened through "base" keys, to refuse a cycle.
PlatformSpec read_platform(const nlohmann::json& j, const std::string& file, const std::string& path,
                           const std::string& base_dir, std::vector<std::string>& chain) {
  if (j.is_object() && j.contains("base")) {
    const std::string where = file + ":" + path + "/base";
    if (!j["base"].is_string()) throw ConfigError(where, "expected a platform file name");
    const std::string base_file = resolve(base_dir, j["base"].get<std::string>());
    if (const std::string why = input_file_problem(base_file); !why.empty()) {
      throw ConfigError(where, "platform file " + echo(base_file, 200) + ": " + why);
    }
    const std::string id = file_identity(base_file);
    const bool cycle = std::find(chain.begin(), chain.end(), id) != chain.end();
    chain.push_back(id);
    if (cycle || chain.size() > kMaxBaseChain) {
      std::string files;
      for (const auto& f : chain) files += (files.empty() ? "" : " -> ") + f;
      throw ConfigError(
          where, cycle ? "platform files name each other as base in a cycle: " + files
                       : "more than " + std::to_string(kMaxBaseChain) + " platform files chained by base: " + files);
    }
    nlohmann::json merged = read_json_file(base_file, "platform file");
    nlohmann::json patch = j;
    patch.erase("base");
    merged.merge_patch(patch);
    PlatformSpec p = read_platform(merged, file + " (base " + base_file + ")", path,
                                   fs::path(base_file).parent_path().string(), chain);
    p.resolved["base"] = base_file;
    return p;
  }
  ConfigReader r(j, file, path);
  PlatformSpec p;
  p.origin = file + ":" + path;
  p.name = r.string("name", fs::path(file).stem().string());
  p.topology = r.choice("topology", "star", {"star", "fat_tree", "dragonfly", "xml"});
  const std::string catalog = resolve(base_dir, r.string("device_catalog", "devices.json"));
  p.device = read_device_key(r, "device", catalog);
  double preset_bw = 10e9, preset_lat = 50e-6;
  const bool preset = read_link_preset(r, base_dir, preset_bw, preset_lat);
  if (p.topology == "xml") {
    p.xml_file = resolve(base_dir, r.require_string("xml"));
    if (const std::string why = input_file_problem(p.xml_file); !why.empty()) {
      r.fail("xml", "platform file " + echo(p.xml_file, 200) + ": " + why);
    }
    const std::string ext = fs::path(p.xml_file).extension().string();
    if (ext == ".so" || ext == ".dylib")
      r.fail("xml", "a SimGrid XML file, not a library (SimGrid would load its code)");
  } else {
    p.hosts = static_cast<int>(r.integer("hosts", 0, 0, 1 << 20));
    p.link_bandwidth_bps = r.number("link_bandwidth_bps", preset_bw, 1e3, 1e15);
    p.link_latency_s = r.number("link_latency_s", preset_lat, 0, 10);
    p.sharing = r.choice("sharing", "split_duplex", {"split_duplex", "shared", "fatpipe", "per_connection"});
    if (p.sharing == "per_connection" && p.topology != "star")
      r.fail("sharing", "\"per_connection\" (a link per pair of nodes) is built for the star topology only");
    read_topology(r, p);
    read_node(r, p, catalog);
  }
  if (r.has("machine_cores")) p.machine_cores = static_cast<int>(r.integer("machine_cores", 0, 1, 4096));
  if (p.machine_cores > 0 && (p.topology != "star" || p.node || p.partition.groups > 0)) {
    r.fail("machine_cores",
           "one machine's cores shared by all hosts: for a star of single-device nodes only "
           "(no node, chip_partition or other topology)");
  }
  // Placement: devices take the workers when a node has several hosts.
  const bool multi = p.node.has_value() || p.partition.groups > 0;
  ConfigReader pl = r.child("placement");
  p.placement.ranks =
      pl.choice("ranks", multi ? "workers_on_devices" : "one_per_host", {"one_per_host", "workers_on_devices"});
  p.placement.master = pl.choice("master", p.node && p.node->cpu ? "cpu" : "device0", {"cpu", "device0"});
  pl.finish();
  r.resolved()["placement"] = pl.resolved();
  if (p.placement.master == "cpu" && p.placement.ranks == "workers_on_devices" && !(p.node && p.node->cpu)) {
    pl.fail("master", "the platform's nodes have no CPU host; use \"device0\"");
  }
  if (r.has("master_device")) {
    if (p.topology == "xml" || multi || p.machine_cores > 0 || p.placement.ranks != "one_per_host") {
      r.fail("master_device",
             "a master's own host: for nodes of one device with placement ranks \"one_per_host\" (no node, "
             "chip_partition, machine_cores or xml topology)");
    }
    p.master_device = read_device_key(r, "master_device", catalog);
  }

  p.message_overhead = read_message_overhead(r);
  p.network_stack = read_network_stack(r);
  p.message_noise = read_message_noise(r);
  p.network_model = r.choice("network_model", preset ? "CM02" : "LV08", {"LV08", "CM02", "SMPI", "IB"});
  if (preset) p.simgrid_config["network/crosstraffic"] = "0";  // pure alpha-beta: no reverse ACK flow
  if (r.has("simgrid_config")) {
    const auto& cfg = r.raw("simgrid_config");
    if (!cfg.is_object()) r.fail("simgrid_config", "expected an object of SimGrid --cfg items");
    for (const auto& [k, v] : cfg.items()) {
      const std::string key = "simgrid_config/" + echo(k, 40);
      if (!v.is_string() && !v.is_number()) r.fail(key, "expected a string or a number");
      const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
      // SimGrid reads "key:value" items separated by spaces or commas (config::set_parse).
      if (k.empty() || k.find_first_of(": \t\n\r,") != std::string::npos) r.fail(key, "not a SimGrid option name");
      if (value.find_first_of(" \t\n\r,") != std::string::npos) {
        r.fail(key, "a SimGrid option value has no spaces or commas: \"" + echo(value) + "\"");
      }
      p.simgrid_config[k] = value;
    }
  }
  r.resolved()["simgrid_config"] = p.simgrid_config;
  if (r.has("calibration")) r.raw("calibration");  // what `dtsim calibrate` fitted: a record, not a setting
  r.finish();
  p.resolved = r.resolved();
  p.resolved["device_resolved"] = device_json(p.device);
  if (p.master_device) p.resolved["master_device_resolved"] = device_json(*p.master_device);
  if (p.partition.groups > 0) p.resolved["chip_resolved"] = device_json(p.partition.chip);
  return p;
}

}  // namespace

PlatformSpec read_platform(const nlohmann::json& j, const std::string& file, const std::string& path,
                           const std::string& base_dir) {
  std::vector<std::string> chain;
  return read_platform(j, file, path, base_dir, chain);
}

PlatformSpec load_platform_file(const std::string& file) {
  std::vector<std::string> chain{file_identity(file)};
  return read_platform(read_json_file(file, "platform file"), file, "", fs::path(file).parent_path().string(), chain);
}

void check_partition_capacity(const PlatformSpec& spec, double weight_bytes, double data_bytes) {
  const ChipPartition& c = spec.partition;
  if (c.groups == 0 || c.chip.memory_bytes <= 0) return;
  const double need = c.groups * (weight_bytes + data_bytes);
  if (need > c.chip.memory_bytes) {
    char what[256];
    std::snprintf(
        what, sizeof what, "%d groups x (weights %.1f MB + data %.1f MB) = %.2f GB do not fit the %.2f GB of %s memory",
        c.groups, weight_bytes / 1e6, data_bytes / 1e6, need / 1e9, c.chip.memory_bytes / 1e9, c.chip.name.c_str());
    throw ConfigError(spec.origin + "/chip_partition/groups", what);
  }
}

}  // namespace dts::sim
