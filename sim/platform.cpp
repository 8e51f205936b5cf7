// Platform reading and building. The star cluster follows SIMGRID_NOTES.md §3.4: one split-duplex link per
// host (a full-duplex NIC), host -> anyone over its link UP, anyone -> host over the link DOWN.
#include "sim/platform.hpp"

#include <algorithm>
#include <filesystem>

#include "algorithms/api/config_reader.hpp"

namespace sg4 = simgrid::s4u;
namespace fs = std::filesystem;

namespace dts::sim {
namespace {

std::string resolve(const std::string& base_dir, const std::string& p) {
  const fs::path path(p);
  return path.is_absolute() ? p : (fs::path(base_dir) / path).lexically_normal().string();
}

// Host names sorted with numbers compared as numbers ("node-2" before "node-10").
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const auto na = std::stoull(a.substr(i, ie - i)), nb = std::stoull(b.substr(j, je - j));
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

PlatformSpec read_platform(const nlohmann::json& j, const std::string& file, const std::string& path,
                           const std::string& base_dir) {
  ConfigReader r(j, file, path);
  PlatformSpec p;
  p.name = r.string("name", fs::path(file).stem().string());
  p.topology = r.choice("topology", "star", {"star", "xml"});
  if (r.has("device") && r.raw("device").is_object()) {
    ConfigReader d = r.child("device");
    p.device = read_device(d, "inline");
    r.resolved()["device"] = d.resolved();
  } else {
    const std::string catalog = resolve(base_dir, r.string("device_catalog", "devices.json"));
    const std::string name = r.require_string("device");
    p.device = find_device(catalog, name, r.where("device"));
  }
  if (p.topology == "xml") {
    p.xml_file = resolve(base_dir, r.require_string("xml"));
    if (!fs::exists(p.xml_file)) r.fail("xml", "platform file not found: " + p.xml_file);
  } else {
    p.hosts = static_cast<int>(r.integer("hosts", 0, 0, 1 << 20));
    p.link_bandwidth_bps = r.number("link_bandwidth_bps", 10e9, 1e3, 1e15);
    p.link_latency_s = r.number("link_latency_s", 50e-6, 0, 10);
    p.sharing = r.choice("sharing", "split_duplex", {"split_duplex", "shared", "fatpipe"});
  }
  p.network_model = r.choice("network_model", "LV08", {"LV08", "CM02", "SMPI", "IB"});
  if (r.has("simgrid_config")) {
    const auto& cfg = r.raw("simgrid_config");
    if (!cfg.is_object()) r.fail("simgrid_config", "expected an object of SimGrid --cfg items");
    for (const auto& [k, v] : cfg.items()) {
      if (!v.is_string() && !v.is_number()) r.fail("simgrid_config/" + k, "expected a string or a number");
      p.simgrid_config[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    r.resolved()["simgrid_config"] = cfg;
  }
  r.finish();
  p.resolved = r.resolved();
  p.resolved["device_resolved"] = {{"name", p.device.name},
                                   {"peak_flops", p.device.peak_flops},
                                   {"mem_bw_Bps", p.device.mem_bw_Bps},
                                   {"efficiency", p.device.efficiency},
                                   {"source", p.device.source}};
  return p;
}

PlatformSpec load_platform_file(const std::string& file) {
  return read_platform(read_json_file(file, "platform file"), file, "", fs::path(file).parent_path().string());
}

std::vector<sg4::Host*> build_platform(const PlatformSpec& spec, int ranks) {
  sg4::Engine& e = *sg4::Engine::get_instance();
  sg4::Engine::set_config("network/model:" + spec.network_model);
  for (const auto& [k, v] : spec.simgrid_config) sg4::Engine::set_config(k + ":" + v);

  std::vector<sg4::Host*> hosts;
  if (spec.topology == "xml") {
    e.load_platform(spec.xml_file);
    hosts = e.get_all_hosts();
    std::sort(hosts.begin(), hosts.end(),
              [](const sg4::Host* a, const sg4::Host* b) { return natural_less(a->get_name(), b->get_name()); });
  } else {
    const int n = spec.hosts == 0 ? ranks : spec.hosts;
    auto* zone = sg4::create_star_zone(spec.name.empty() ? "cluster" : spec.name);
    const double bw_Bps = spec.link_bandwidth_bps / 8;
    for (int i = 0; i < n; ++i) {
      const std::string name = "node-" + std::to_string(i);
      sg4::Host* h = zone->create_host(name, spec.device.peak_flops)->seal();
      sg4::Link* link = nullptr;
      if (spec.sharing == "split_duplex") {
        link = zone->create_split_duplex_link("link-" + name, bw_Bps)->set_latency(spec.link_latency_s)->seal();
      } else {
        link = zone->create_link("link-" + name, bw_Bps)
                   ->set_latency(spec.link_latency_s)
                   ->set_sharing_policy(spec.sharing == "shared" ? sg4::Link::SharingPolicy::SHARED
                                                                  : sg4::Link::SharingPolicy::FATPIPE)
                   ->seal();
      }
      const auto dir = spec.sharing == "split_duplex" ? sg4::LinkInRoute::Direction::UP : sg4::LinkInRoute::Direction::NONE;
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{link, dir}}, true);
      hosts.push_back(h);
    }
    zone->seal();
  }
  if (static_cast<int>(hosts.size()) < ranks) {
    throw ConfigError(spec.name, "the platform has " + std::to_string(hosts.size()) + " hosts for " +
                                     std::to_string(ranks) + " ranks");
  }
  hosts.resize(static_cast<std::size_t>(ranks));
  return hosts;
}

}  // namespace dts::sim
