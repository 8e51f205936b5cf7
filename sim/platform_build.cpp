// Platform building: the cluster zone (SIMGRID_NOTES.md §3.4-3.6: a star of NIC links, SimGrid's fat tree or
// dragonfly) whose leaves are nodes, and the placement of ranks on their hosts. A node is one host, or a full
// zone with its own routes (a CPU host and devices behind PCIe switches; or one chip's groups around a shared
// intra-chip link) whose gateway, the CPU or a router, is where the NIC attaches.
#include <algorithm>
#include <cstring>
#include <xbt/config.hpp>

#include "core/config_reader.hpp"
#include "sim/message_costs.hpp"
#include "sim/platform.hpp"

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace dts::sim {
namespace {

constexpr const char* kRole = "dts_role";           // host property: "cpu", "device" or "machine"
constexpr const char* kNode = "dts_node";           // host property: the node's index
constexpr const char* kDataHost = "dts_data_host";  // device property: the host whose memory holds its data
constexpr const char* kMachine = "dts_machine";     // host property: the shared machine that runs its executions
constexpr const char* kMaster = "dts_master";       // host property of a master's host: its model is master_device
using Dir = sg4::LinkInRoute::Direction;

// Host names sorted with numbers compared as numbers ("node-2" before "node-10").
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compared as numbers of any length (an XML host name may hold more digits than an integer).
      std::size_t ia = i, jb = j;
      while (ia + 1 < ie && a[ia] == '0') ++ia;
      while (jb + 1 < je && b[jb] == '0') ++jb;
      if (ie - ia != je - jb) return ie - ia < je - jb;
      if (const int c = a.compare(ia, ie - ia, b, jb, je - jb); c != 0) return c < 0;
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

struct NodeHosts {
  sg4::Host* cpu = nullptr;
  std::vector<sg4::Host*> devices;
};

class Builder {
 public:
  // `masters`: the ranks before the workers, each on its own node, whose hosts get the master_device if any.
  Builder(const PlatformSpec& spec, int masters) : spec_(spec), masters_(spec.master_device ? masters : 0) {}

  int hosts_per_node() const { return (spec_.node && spec_.node->cpu ? 1 : 0) + devices_per_node(); }
  int devices_per_node() const {
    return spec_.node ? spec_.node->devices : spec_.partition.groups > 0 ? spec_.partition.groups : 1;
  }

  // Node `id`: its hosts, in a zone under `parent` when it has several. Returns {netpoint, gateway}.
  std::pair<NetPoint*, NetPoint*> make_node(sg4::NetZone* parent, unsigned long id) {
    const std::string name = "node-" + std::to_string(id);
    if (nodes_.size() <= id) nodes_.resize(id + 1);
    NodeHosts& n = nodes_[id];
    if (!spec_.node && spec_.partition.groups == 0) {
      if (id < static_cast<unsigned long>(masters_)) {  // a driver's or a server's own CPU host
        n.cpu = host(parent, name, *spec_.master_device, "cpu", id, /*master=*/true);
        return {n.cpu->get_netpoint(), nullptr};
      }
      n.devices.push_back(host(parent, name, spec_.device, "device", id));
      return {n.devices.back()->get_netpoint(), nullptr};
    }
    sg4::NetZone* zone = sg4::create_full_zone(name);
    zone->set_parent(parent);
    for (int d = 0; d < devices_per_node(); ++d) {
      n.devices.push_back(host(zone, name + "-dev-" + std::to_string(d), spec_.device, "device", id));
    }
    NetPoint* gateway = spec_.partition.groups > 0 ? chip_routes(zone, name, n) : pcie_routes(zone, name, n, id);
    zone->seal();
    return {zone->get_netpoint(), gateway};
  }

  // machine_cores: the shared machine, a host of no route (it never sends) whose cores are the devices'.
  void make_machine(sg4::NetZone* zone) {
    if (spec_.machine_cores <= 0) return;
    sg4::Host* m = zone->create_host("machine", spec_.device.peak_flops)->set_core_count(spec_.machine_cores);
    m->set_property(kRole, "machine");
    m->seal();
    for (const NodeHosts& n : nodes_) {
      for (sg4::Host* d : n.devices) d->set_property(kMachine, m->get_name());
    }
  }

  const std::vector<NodeHosts>& nodes() const { return nodes_; }

 private:
  sg4::Host* host(sg4::NetZone* zone, const std::string& name, const Device& d, const char* role, unsigned long node,
                  bool master = false) {
    sg4::Host* h = zone->create_host(name, d.peak_flops);
    h->set_property(kRole, role);
    h->set_property(kNode, std::to_string(node));
    if (master) h->set_property(kMaster, "1");
    return h->seal();
  }

  static void route(sg4::NetZone* zone, NetPoint* a, NetPoint* b, const std::vector<sg4::LinkInRoute>& links) {
    zone->add_route(a, b, nullptr, nullptr, links, /*symmetrical=*/false);
  }

  // CPU (or a root-complex router) - uplink - switch s - device link - device. Returns the root.
  NetPoint* pcie_routes(sg4::NetZone* zone, const std::string& name, NodeHosts& n, unsigned long id) {
    const NodeSpec& node = *spec_.node;
    NetPoint* root = nullptr;
    if (node.cpu) {
      n.cpu = host(zone, name + "-cpu", *node.cpu, "cpu", id);
      root = n.cpu->get_netpoint();
      if (node.data_on_cpu) {
        for (auto* d : n.devices) d->set_property(kDataHost, n.cpu->get_name());
      }
      for (auto* d : n.devices) {
        d->set_property(kNodeCpuProperty, n.cpu->get_name());
      }
    } else {
      root = zone->create_router(name + "-root");
    }
    auto pcie = [&](const std::string& link) {
      return zone->create_split_duplex_link(name + "-pcie-" + link, node.pcie_bandwidth_bps / 8)
          ->set_latency(node.pcie_latency_s)
          ->seal();
    };
    const int per_switch = node.devices / node.pcie_switches;
    std::vector<sg4::Link*> up, dev;  // UP: toward the root
    for (int s = 0; s < node.pcie_switches; ++s) up.push_back(pcie("up-" + std::to_string(s)));
    for (int d = 0; d < node.devices; ++d) dev.push_back(pcie("dev-" + std::to_string(d)));
    for (int a = 0; a < node.devices; ++a) {
      NetPoint* pa = n.devices[a]->get_netpoint();
      sg4::Link* ua = up[a / per_switch];
      route(zone, pa, root, {{dev[a], Dir::UP}, {ua, Dir::UP}});
      route(zone, root, pa, {{ua, Dir::DOWN}, {dev[a], Dir::DOWN}});
      for (int b = 0; b < node.devices; ++b) {
        if (a == b) continue;
        NetPoint* pb = n.devices[b]->get_netpoint();
        if (a / per_switch == b / per_switch) {
          route(zone, pa, pb, {{dev[a], Dir::UP}, {dev[b], Dir::DOWN}});
        } else {  // through the root complex
          route(zone, pa, pb, {{dev[a], Dir::UP}, {ua, Dir::UP}, {up[b / per_switch], Dir::DOWN}, {dev[b], Dir::DOWN}});
        }
      }
    }
    return root;
  }

  // Groups of one chip around one shared link at the chip's memory bandwidth; a router stands for the NIC.
  NetPoint* chip_routes(sg4::NetZone* zone, const std::string& name, NodeHosts& n) {
    NetPoint* nic = zone->create_router(name + "-nic");
    sg4::Link* chip = zone->create_link(name + "-chip", spec_.partition.chip.mem_bw_Bps)
                          ->set_latency(spec_.partition.link_latency_s)
                          ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                          ->seal();
    for (auto* a : n.devices) {
      route(zone, a->get_netpoint(), nic, {{chip, Dir::NONE}});
      route(zone, nic, a->get_netpoint(), {{chip, Dir::NONE}});
      for (auto* b : n.devices) {
        if (a != b) route(zone, a->get_netpoint(), b->get_netpoint(), {{chip, Dir::NONE}});
      }
    }
    return nic;
  }

  const PlatformSpec& spec_;
  int masters_ = 0;
  std::vector<NodeHosts> nodes_;
};

sg4::Link::SharingPolicy policy(const std::string& s) {
  return s == "split_duplex" ? sg4::Link::SharingPolicy::SPLITDUPLEX
         : s == "shared"     ? sg4::Link::SharingPolicy::SHARED
                             : sg4::Link::SharingPolicy::FATPIPE;
}

// sharing "per_connection": each node's NIC link split-duplex, and one shared link per pair of nodes that both
// directions between them cross (a TCP connection that carries one direction at a time, as Open MPI's TCP BTL
// does for a pair of ranks), in a full zone: N (N - 1) routes, so at most kMaxConnectionNodes nodes.
constexpr int kMaxConnectionNodes = 256;

void build_connections(const PlatformSpec& spec, Builder& b, int nodes) {
  if (nodes > kMaxConnectionNodes) {
    throw ConfigError(spec.origin + "/sharing", "\"per_connection\" builds a link per pair of nodes: at most " +
                                                    std::to_string(kMaxConnectionNodes) + " nodes, not " +
                                                    std::to_string(nodes));
  }
  auto* zone = sg4::create_full_zone(spec.name.empty() ? "cluster" : spec.name);
  const double bw_Bps = spec.link_bandwidth_bps / 8;
  std::vector<std::pair<NetPoint*, NetPoint*>> ends;
  std::vector<sg4::Link*> nics;
  for (int i = 0; i < nodes; ++i) {
    ends.push_back(b.make_node(zone, static_cast<unsigned long>(i)));
    nics.push_back(zone->create_split_duplex_link("link-node-" + std::to_string(i), bw_Bps)
                       ->set_latency(spec.link_latency_s)
                       ->seal());
  }
  for (int i = 0; i < nodes; ++i) {
    for (int j = i + 1; j < nodes; ++j) {
      sg4::Link* conn = zone->create_link("conn-" + std::to_string(i) + "-" + std::to_string(j), bw_Bps)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED)
                            ->seal();
      const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
      zone->add_route(ends[ui].first, ends[uj].first, ends[ui].second, ends[uj].second,
                      {{nics[ui], Dir::UP}, {conn, Dir::NONE}, {nics[uj], Dir::DOWN}}, false);
      zone->add_route(ends[uj].first, ends[ui].first, ends[uj].second, ends[ui].second,
                      {{nics[uj], Dir::UP}, {conn, Dir::NONE}, {nics[ui], Dir::DOWN}}, false);
    }
  }
  b.make_machine(zone);
  zone->seal();
}

void build_star(const PlatformSpec& spec, Builder& b, int nodes) {
  if (spec.sharing == "per_connection") {
    build_connections(spec, b, nodes);
    return;
  }
  auto* zone = sg4::create_star_zone(spec.name.empty() ? "cluster" : spec.name);
  const double bw_Bps = spec.link_bandwidth_bps / 8;
  for (int i = 0; i < nodes; ++i) {
    const auto [point, gateway] = b.make_node(zone, static_cast<unsigned long>(i));
    const std::string name = "link-node-" + std::to_string(i);
    sg4::Link* link = spec.sharing == "split_duplex"
                          ? zone->create_split_duplex_link(name, bw_Bps)->set_latency(spec.link_latency_s)->seal()
                          : zone->create_link(name, bw_Bps)
                                ->set_latency(spec.link_latency_s)
                                ->set_sharing_policy(policy(spec.sharing))
                                ->seal();
    const auto dir = spec.sharing == "split_duplex" ? Dir::UP : Dir::NONE;
    zone->add_route(point, nullptr, gateway, nullptr, {{link, dir}}, true);
  }
  b.make_machine(zone);
  zone->seal();
}

sg4::ClusterCallbacks leaves(Builder& b) {
  return sg4::ClusterCallbacks(
      [&b](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) { return b.make_node(zone, id); });
}

// SimGrid gives every dragonfly tier the one bandwidth (times the tier's link count) and latency; patch the
// router-to-router tiers (named green_link*, black_link*, blue_link* by DragonflyZone) when asked.
void patch_dragonfly_tiers(const PlatformSpec& spec) {
  const DragonflySpec& d = spec.dragonfly;
  if (d.router_bandwidth_bps <= 0 && d.router_latency_s < 0) return;
  for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) {
    const std::string& n = l->get_name();
    if (n.rfind("green_link", 0) != 0 && n.rfind("black_link", 0) != 0 && n.rfind("blue_link", 0) != 0) continue;
    if (d.router_bandwidth_bps > 0) {
      l->set_bandwidth(l->get_bandwidth() / (spec.link_bandwidth_bps / 8) * (d.router_bandwidth_bps / 8));
    }
    if (d.router_latency_s >= 0) l->set_latency(d.router_latency_s);
  }
}

[[noreturn]] void too_few(const PlatformSpec& spec, const std::string& what, std::size_t have, int need) {
  throw ConfigError(spec.origin + "/hosts", "the platform has " + std::to_string(have) + " " + what + " for " +
                                                std::to_string(need) + " ranks");
}

// Rank -> host, as the placement says.
std::vector<sg4::Host*> place(const PlatformSpec& spec, const std::vector<NodeHosts>& nodes, int ranks, int workers) {
  std::vector<sg4::Host*> all, devices;
  for (const auto& n : nodes) {
    if (n.cpu) all.push_back(n.cpu);
    all.insert(all.end(), n.devices.begin(), n.devices.end());
    devices.insert(devices.end(), n.devices.begin(), n.devices.end());
  }
  if (spec.placement.ranks == "one_per_host") {
    if (static_cast<int>(all.size()) < ranks) too_few(spec, "hosts", all.size(), ranks);
    all.resize(static_cast<std::size_t>(ranks));
    return all;
  }
  const int servers = ranks - workers;
  if (static_cast<int>(devices.size()) < workers) too_few(spec, "devices", devices.size(), workers);
  sg4::Host* master = spec.placement.master == "cpu" ? nodes.front().cpu : nodes.front().devices.front();
  DTS_ASSERT(master != nullptr, "placement: master on a CPU that the platform lacks (checked when read)");
  std::vector<sg4::Host*> out(static_cast<std::size_t>(servers), master);
  out.insert(out.end(), devices.begin(), devices.begin() + workers);
  return out;
}

}  // namespace

std::vector<sg4::Host*> build_platform(const PlatformSpec& spec, int ranks, int workers, const StepHook& before) {
  const auto step = [&before](const std::string& key) {
    if (before) before(key);
  };
  if (workers < 0 || workers > ranks) workers = ranks;
  sg4::Engine& e = *sg4::Engine::get_instance();
  // A key the command line set (--cfg=KEY:VALUE), hence not at its default before the platform sets anything,
  // keeps its value: the most specific input wins.
  const bool model_given = !simgrid::config::is_default("network/model");
  std::vector<bool> given;
  for (const auto& [k, v] : spec.simgrid_config) {
    step("simgrid_config/" + k);
    given.push_back(!simgrid::config::is_default(k.c_str()));
  }
  step("network_model");
  if (!model_given) sg4::Engine::set_config("network/model:" + spec.network_model);
  std::size_t i = 0;
  for (const auto& [k, v] : spec.simgrid_config) {
    step("simgrid_config/" + k);
    if (!given[i++]) sg4::Engine::set_config(k + ":" + v);
  }

  if (spec.topology == "xml") {
    step("xml");
    e.load_platform(spec.xml_file);
    std::vector<sg4::Host*> hosts = e.get_all_hosts();
    std::sort(hosts.begin(), hosts.end(),
              [](const sg4::Host* a, const sg4::Host* b) { return natural_less(a->get_name(), b->get_name()); });
    if (static_cast<int>(hosts.size()) < ranks) too_few(spec, "hosts", hosts.size(), ranks);
    hosts.resize(static_cast<std::size_t>(ranks));
    return hosts;
  }
  step("build");
  Builder b(spec, ranks - workers);
  const double bw_Bps = spec.link_bandwidth_bps / 8;
  if (spec.topology == "fat_tree") {
    const FatTreeSpec& f = spec.fat_tree;
    sg4::create_fatTree_zone(spec.name, nullptr, {f.levels, f.down, f.up, f.parallel}, leaves(b), bw_Bps,
                             spec.link_latency_s, policy(spec.sharing))
        ->seal();
  } else if (spec.topology == "dragonfly") {
    const DragonflySpec& d = spec.dragonfly;
    sg4::create_dragonfly_zone(
        spec.name, nullptr,
        {{d.groups, d.group_links}, {d.chassis, d.chassis_links}, {d.routers, d.router_links}, d.nodes_per_router},
        leaves(b), bw_Bps, spec.link_latency_s, policy(spec.sharing))
        ->seal();
    patch_dragonfly_tiers(spec);
  } else {
    int nodes = spec.hosts;
    if (nodes == 0) {  // as many as the ranks need
      const int per_node = spec.placement.ranks == "one_per_host" ? b.hosts_per_node() : b.devices_per_node();
      const int need = spec.placement.ranks == "one_per_host" ? ranks : workers;
      nodes = std::max(1, (need + per_node - 1) / per_node);
    }
    build_star(spec, b, nodes);
  }
  return place(spec, b.nodes(), ranks, workers);
}

sg4::Host* machine_of(const sg4::Host* host) {
  const char* m = host->get_property(kMachine);
  return m != nullptr ? sg4::Host::by_name(m) : nullptr;
}

const Device& device_of_host(const PlatformSpec& spec, const sg4::Host* host) {
  const char* role = host->get_property(kRole);
  if (role == nullptr || std::strcmp(role, "cpu") != 0) return spec.device;
  if (host->get_property(kMaster) != nullptr && spec.master_device) return *spec.master_device;
  if (spec.node && spec.node->cpu) return *spec.node->cpu;
  return spec.device;
}

}  // namespace dts::sim
