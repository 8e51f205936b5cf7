// The SMPI side by side of `dtsim bench scale`: our ring / tree allreduce of the model's size alone, at each
// fidelity, against SMPI's MPI_Allreduce (experiments/bench/smpi_allreduce.c, built with Debian's smpicc) on
// the same platform, exported as SimGrid XML (a <cluster>: private split-duplex links to one switch for the
// star, FAT_TREE with the same parameters for the fat tree), with the same network model and settings.
// SMPI's collective: smpi/allreduce lr (the ring) or redbcast (binomial reduce + broadcast, as our tree).
// Nothing is charged for the additions on either side (ours: a Compute that charges nothing; SMPI:
// smpi/simulate-computation:no). Both time one warm-up call apart: per call = (end - after warm-up) / calls.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "algorithms/algorithm.hpp"
#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "experiments/bench/bench.hpp"
#include "experiments/bench/bench_scale.hpp"
#include "sim/launcher.hpp"

namespace dts::bench::scale {
namespace {

namespace fs = std::filesystem;
constexpr int kCalls = 2;  // measured calls after the warm-up

double wall_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ChildResult ours(const sim::PlatformSpec& spec, int P, std::size_t floats, const std::string& algo,
                 sim::Fidelity fidelity) {
  sim::SimJob job;
  job.platform = spec;
  job.ranks = job.workers = P;
  job.fidelity = fidelity;
  const auto kind = collectives::parse_allreduce_algo(algo, "--algos");
  double w0 = 0, s0 = 0, w1 = 0, s1 = 0;
  const double start = wall_now_s();
  job.main = [&](Context& ctx) {
    Vec data = ctx.compute.make_vec();
    const Group all = Group::range(0, P);
    for (int call = 0; call <= kCalls; ++call) {
      collectives::allreduce(kind, ctx.comm, ctx.compute, all, data, tags::kCollective);
      if (ctx.comm.rank() != 0) continue;
      if (call == 0) w0 = wall_now_s(), s0 = ctx.comm.now_s();
      if (call == kCalls) w1 = wall_now_s(), s1 = ctx.comm.now_s();
    }
  };
  job.make_compute = [&](Rank, simgrid::s4u::Host*, sim::TimeAccount*, sim::Wires&) -> std::unique_ptr<Compute> {
    return std::make_unique<CollectiveOnlyCompute>(floats, false);
  };
  struct NoRecorder final : Recorder {
    void step(std::int64_t, float) override {}
    bool eval_due(std::int64_t) const override { return false; }
    void evaluate(std::int64_t, ConstSlice, bool) override {}
  };
  job.make_recorder = [](Comm&) -> std::unique_ptr<Recorder> { return std::make_unique<NoRecorder>(); };
  sim::run_simulation(job);
  return {true, w0 - start, (w1 - w0) / kCalls, (s1 - s0) / kCalls, 0, 0};
}

std::string xml_of(const sim::PlatformSpec& spec, int hosts) {
  DTS_ASSERT(!spec.node && spec.partition.groups == 0, "bench scale: SMPI export of single-host nodes only");
  std::ostringstream x;
  x.precision(17);
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n  <cluster id=\"" << spec.name << "\" prefix=\"node-\" suffix=\"\"";
  if (spec.topology == "fat_tree") {
    const sim::FatTreeSpec& f = spec.fat_tree;
    auto list = [](const std::vector<unsigned>& v) {
      std::string s;
      for (const unsigned u : v) s += (s.empty() ? "" : ",") + std::to_string(u);
      return s;
    };
    hosts = 1;
    for (const unsigned d : f.down) hosts *= static_cast<int>(d);
    x << " topology=\"FAT_TREE\" topo_parameters=\"" << f.levels << ";" << list(f.down) << ";" << list(f.up) << ";"
      << list(f.parallel) << "\"";
  } else {
    DTS_ASSERT(spec.topology == "star", "bench scale: SMPI export of star and fat-tree platforms only");
  }
  const char* sharing = spec.sharing == "split_duplex" ? "SPLITDUPLEX"
                        : spec.sharing == "fatpipe"    ? "FATPIPE"
                                                       : "SHARED";
  x << " radical=\"0-" << hosts - 1 << "\" speed=\"" << spec.device.peak_flops << "f\" bw=\""
    << spec.link_bandwidth_bps / 8 << "Bps\" lat=\"" << spec.link_latency_s << "s\" sharing_policy=\"" << sharing
    << "\"/>\n</platform>\n";
  return x.str();
}

struct Smpi {
  fs::path dir, exe;
};

std::optional<Smpi> build_smpi() {
  int code = 0;
  capture("command -v smpicc && command -v smpirun", code);
  if (code != 0) return std::nullopt;
  char tmpl[] = "/tmp/dtsim-smpi-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return std::nullopt;
  Smpi s{tmpl, fs::path(tmpl) / "smpi_allreduce"};
  const std::string src = DTS_SOURCE_DIR "/experiments/bench/smpi_allreduce.c";
  const std::string out = capture("smpicc -O2 '" + src + "' -o '" + s.exe.string() + "' 2>&1", code);
  if (code != 0) {
    std::cout << "SMPI: smpicc failed:\n" << out;
    return std::nullopt;
  }
  return s;
}

ChildResult run_smpi(const Smpi& s, const sim::PlatformSpec& spec, int P, double bytes, const std::string& algo,
                     double limit_s) {
  const fs::path xml = s.dir / ("platform-" + std::to_string(P) + ".xml"), hostfile = s.dir / "hostfile";
  std::ofstream(xml) << xml_of(spec, P);
  {
    std::ofstream h(hostfile);
    for (int i = 0; i < P; ++i) h << "node-" << i << '\n';
  }
  std::ostringstream cmd;
  cmd.precision(17);
  cmd << "cd '" << s.dir.string() << "' && timeout " << static_cast<int>(limit_s) << " smpirun -np " << P
      << " -platform '" << xml.string() << "' -hostfile '" << hostfile.string() << "' '" << s.exe.string() << "' "
      << bytes << ' ' << kCalls << " --cfg=smpi/allreduce:" << (algo == "ring" ? "lr" : "redbcast")
      << " --cfg=smpi/simulate-computation:no --cfg=network/model:" << spec.network_model;
  for (const auto& [k, v] : spec.simgrid_config) cmd << " --cfg=" << k << ':' << v;
  cmd << " --log=root.thres:error 2>&1";
  const double t0 = wall_now_s();
  int code = 0;
  const std::string out = capture(cmd.str(), code);
  ChildResult r;
  r.total_s = wall_now_s() - t0;
  const auto at = out.find("dts_smpi sim_per_call");
  if (code != 0 || at == std::string::npos) {
    std::cout << "SMPI run failed (exit " << code << "): " << out.substr(0, 400) << '\n';
    return r;
  }
  std::sscanf(out.c_str() + at, "dts_smpi sim_per_call %lf wall_per_call %lf", &r.sim_per_s, &r.wall_per_s);
  r.ok = true;
  return r;
}

// Median figures of up to `reps` runs within the budget; ok false when none ran.
template <typename Fn>
ChildResult repeated(int reps, double budget_s, Fn fn) {
  std::vector<double> wall, sim, peak;
  double spent = 0;
  for (int rep = 0; rep < reps && (rep == 0 || spent * (rep + 1) / rep <= budget_s); ++rep) {
    const ChildResult r = fn();
    if (!r.ok) break;
    wall.push_back(r.wall_per_s), sim.push_back(r.sim_per_s), peak.push_back(r.peak_mb);
    spent += r.total_s;
  }
  ChildResult m;
  if (wall.empty()) return m;
  m.ok = true;
  m.wall_per_s = stats_of(wall).median;
  m.sim_per_s = stats_of(sim).median;
  m.peak_mb = stats_of(peak).max;
  m.total_s = spent / static_cast<double>(wall.size());
  m.setup_s = stats_of(wall).max - stats_of(wall).min;  // spread, for the table
  return m;
}

}  // namespace

bool smpi_side_by_side(const SmpiOptions& o) {
  const auto smpi = build_smpi();
  if (!smpi) {
    std::cout << "SMPI side by side: smpicc/smpirun not found (apt-get install simgrid); skipped\n";
    return false;
  }
  std::cout << "\nSMPI side by side: one allreduce of " << o.bytes / 1e6 << " MB (floats) alone, additions not "
            << "charged; ours per fidelity against SMPI's MPI_Allreduce (SMPI_SHARED_MALLOC; ring: smpi/allreduce:lr, "
            << "tree: redbcast) on the same platform as SimGrid XML; median of up to " << o.reps << " runs of "
            << kCalls << " calls after a warm-up; ratio = ours / SMPI\n";
  std::printf("%-8s %-5s %7s  %-16s %12s %9s %16s %11s %11s\n", "platform", "algo", "workers", "who", "wall s/call",
              "peak MB", "simulated s/call", "wall ratio", "sim ratio");
  std::fflush(stdout);
  for (const std::string& platform : o.platforms)
    for (const std::string& algo : o.algos) {
      std::map<std::string, std::vector<std::pair<int, double>>> known, peaks;
      std::map<std::string, bool> skipping;
      for (const int P : o.workers) {
        const sim::PlatformSpec spec = platform_spec(platform, P);
        auto row = [&](const std::string& who, const ChildResult& r, const ChildResult* ref) {
          if (!r.ok) {
            std::printf("%-8s %-5s %7d  %-16s skipped or failed\n", platform.c_str(), algo.c_str(), P, who.c_str());
            return;
          }
          std::printf("%-8s %-5s %7d  %-16s %12.4g %9.0f %16.6g", platform.c_str(), algo.c_str(), P, who.c_str(),
                      r.wall_per_s, r.peak_mb, r.sim_per_s);
          if (ref != nullptr && ref->ok) {
            std::printf(" %11.3g %11.6g", r.wall_per_s / ref->wall_per_s, r.sim_per_s / ref->sim_per_s);
          }
          std::printf("\n");
          std::fflush(stdout);
        };
        auto measure = [&](const std::string& who, const std::function<ChildResult()>& fn) {
          const double predicted = predict_s(known[who], P);
          if (skipping[who] || predicted > o.budget_s || !memory_allows(predict_mb(peaks[who], P))) {
            skipping[who] = true;
            return ChildResult{};
          }
          const ChildResult r = repeated(o.reps, o.budget_s, fn);
          if (r.ok) {
            known[who].emplace_back(P, r.total_s);
            peaks[who].emplace_back(P, r.peak_mb);
          } else {
            skipping[who] = true;
          }
          return r;
        };
        const ChildResult ref = measure("smpi", [&] {
          return in_child([&] { return run_smpi(*smpi, spec, P, o.bytes, algo, 4 * o.budget_s + 60); },
                          4 * o.budget_s + 90);
        });
        row("SMPI", ref, nullptr);
        for (const std::string& f : o.fidelities) {
          const sim::Fidelity fid = f == "message" ? sim::Fidelity::kMessage : sim::Fidelity::kCollective;
          const ChildResult r = measure(f, [&] {
            return in_child([&] { return ours(spec, P, static_cast<std::size_t>(o.bytes / 4), algo, fid); },
                            4 * o.budget_s + 60);
          });
          row("dtsim " + f, r, &ref);
        }
      }
    }
  std::error_code ec;
  fs::remove_all(smpi->dir, ec);
  return true;
}

}  // namespace dts::bench::scale
