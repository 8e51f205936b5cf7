// run_fidelity_case(): one simulation, every collective in its own 10 s slot, first modeled (timed), then real.
#include "tests/sim/fidelity_harness.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <simgrid/s4u.hpp>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "tests/sim/sim_harness.hpp"

namespace dts::test {
namespace {

constexpr double kSlotS = 10.0;
constexpr double kStragglerDelayS = 5e-3;
const std::vector<std::string> kOps = {"ring_allreduce",    "tree_allreduce",     "tree_reduce",
                                       "tree_broadcast",    "ring_allgather",     "ring_reduce_scatter",
                                       "pairwise_exchange", "hypercube_allreduce"};

// Additions cost what they cost on a 20 GB/s device, linear in n (Compute::charge_elementwise).
class LinearCompute final : public CollectiveOnlyCompute {
 public:
  void charge_elementwise(std::size_t n, int streams) override {
    simgrid::s4u::this_actor::sleep_for(static_cast<double>(n) * streams * sizeof(float) / 20e9);
  }
};

// Floats of mixed magnitudes, so that any change in the order of a sum changes its last bits.
std::vector<float> test_values(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(std::sin(rank * 131.0 + static_cast<double>(i) * 7.0) *
                              std::pow(10.0, static_cast<double>((i + static_cast<std::size_t>(rank)) % 7) - 3));
  }
  return v;
}

// Runs collective `op` on `data`; returns the part of the result the collective defines for this member.
std::vector<float> run_op(const std::string& op, Comm& comm, Compute& compute, const Group& g, Slice data, Tag tag) {
  const int P = g.size(), r = comm.rank();
  std::vector<float> out;
  auto real = [&](std::size_t off, std::size_t n) {
    if (!data.data.empty())
      out.assign(data.data.begin() + static_cast<std::ptrdiff_t>(off),
                 data.data.begin() + static_cast<std::ptrdiff_t>(off + n));
  };
  if (op == "ring_allreduce") collectives::ring_allreduce(comm, compute, g, data, tag);
  if (op == "tree_allreduce") collectives::tree_allreduce(comm, compute, g, data, tag);
  if (op == "tree_reduce") collectives::tree_reduce(comm, compute, g, data, 1 % P, tag);
  if (op == "tree_broadcast") collectives::tree_broadcast(comm, g, data, P - 1, tag);
  if (op == "ring_allgather") collectives::ring_allgather(comm, g, data, tag);
  if (op == "hypercube_allreduce") collectives::hypercube_allreduce(comm, compute, g, data, tag);
  if (op == "ring_reduce_scatter") {
    collectives::ring_reduce_scatter(comm, compute, g, data, tag);
    const auto [off, n] = collectives::ring_chunk(data.count, P, r);
    real(off, n);
    return out;
  }
  if (op == "pairwise_exchange" && (r ^ 1) < P) collectives::pairwise_exchange(comm, r ^ 1, data, data, tag);
  if (op == "tree_reduce" && r != 1 % P) return out;  // only the root's data is defined
  real(0, data.count);
  return out;
}

}  // namespace

std::string describe(const FidelityCase& c) {
  return c.topology + " P=" + std::to_string(c.workers) + (c.straggler ? " straggler" : "") + " " +
         std::to_string(c.floats * 4 / 1000000) + " MB";
}

std::string platform_xml(const std::string& topology, int hosts) {
  const auto file = std::filesystem::temp_directory_path() / ("dts_fidelity_" + topology + "_" + std::to_string(hosts) +
                                                              "_" + std::to_string(getpid()) + ".xml");
  std::string attrs;
  if (topology == "fat_tree") {  // 2 levels, k hosts per leaf, k leaves, k / 2 spines: 2:1 oversubscribed
    const int k = static_cast<int>(std::lround(std::sqrt(hosts)));
    attrs = R"(bw="100Gbps" lat="1us" topology="FAT_TREE" topo_parameters="2;)" + std::to_string(k) + "," +
            std::to_string(k) + ";1," + std::to_string(std::max(1, k / 2)) + R"(;1,1")";
  } else if (topology == "dragonfly") {  // groups; chassis per group; routers per chassis; nodes per router
    const std::map<int, std::string> params = {
        {4, "2,1;1,1;1,1;2"}, {16, "2,1;2,1;2,1;2"}, {64, "2,1;2,1;4,1;4"}, {256, "4,1;4,1;4,1;4"}};
    attrs = R"(bw="5.25GBps" lat="1us" topology="DRAGONFLY" topo_parameters=")" + params.at(hosts) + "\"";
  } else {
    attrs = R"(bw="10Gbps" lat="50us")";
  }
  std::ofstream(file) << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="world" routing="Full">
  <cluster id="c" prefix="node-" radical="0-)"
                      << hosts - 1 << R"(" suffix="" speed="1Gf" sharing_policy="SPLITDUPLEX" )" << attrs
                      << R"( loopback_bw="100GBps" loopback_lat="0"/>
</zone></platform>
)";
  return file.string();
}

nlohmann::json run_fidelity_case(const FidelityCase& c, sim::Fidelity fidelity) {
  sim::PlatformSpec spec;
  spec.name = c.topology;
  spec.topology = "xml";
  spec.xml_file = platform_xml(c.topology, c.workers);
  spec.device.peak_flops = 1e9;
  spec.simgrid_config = c.simgrid_config;
  const int P = c.workers, late = (P / 2 + 1) % P;
  auto out = simulate(
      spec, P,
      [&](sim::SimComm& comm, sim::SimNode& node, nlohmann::json& o) {
        LinearCompute compute;
        const Group everyone = Group::range(0, P);
        int slot = 0;
        auto start_slot = [&] {  // every collective starts at the same time on every member, the straggler later
          const double start = kSlotS * slot++;
          node.sleep_for(start + (c.straggler && comm.rank() == late ? kStragglerDelayS : 0) - comm.now_s());
          return start;
        };
        for (std::size_t k = 0; k < kOps.size(); ++k) {  // 1. timed, modeled numerics
          const double start = start_slot();
          run_op(kOps[k], comm, compute, everyone, Slice({}, c.floats), static_cast<Tag>(100 + 10 * k));
          o["t"][kOps[k]] = comm.now_s() - start;
        }
        const std::size_t n = 257 + static_cast<std::size_t>(P);  // not a multiple of P: uneven ring chunks
        for (std::size_t k = 0; k < kOps.size(); ++k) {           // 2. real numerics
          start_slot();
          std::vector<float> v = test_values(comm.rank(), n);
          o["v"][kOps[k]] =
              run_op(kOps[k], comm, compute, everyone, std::span<float>(v), static_cast<Tag>(200 + 10 * k));
        }
        o["sent"] = comm.bytes_sent();
        o["recv"] = comm.bytes_received();
      },
      fidelity, c.rings);
  std::filesystem::remove(spec.xml_file);
  return out;
}

nlohmann::json fidelity_errors(const nlohmann::json& a, const nlohmann::json& b) {
  nlohmann::json errors = nlohmann::json::object();
  for (const auto& op : kOps) {
    double worst = 0;
    for (std::size_t r = 0; r < a["rank"].size(); ++r) {
      const double ta = a["rank"][r]["t"][op].get<double>(), tb = b["rank"][r]["t"][op].get<double>();
      if (ta > 0) worst = std::max(worst, std::abs(tb - ta) / ta);
    }
    errors[op] = worst;
  }
  return errors;
}

}  // namespace dts::test
