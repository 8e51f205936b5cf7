// `dtsim bench scale`: wall seconds per simulated training iteration and peak memory of modeled-numerics
// runs of a ResNet-50 (25.6 M parameters: a 102 MB gradient) on modeled ImageNet, for allreduce SGD (ring,
// tree), Gossiping SGD (pairwise exchanges), asynchronous SGD with a parameter server and GossipGraD (its
// defaults: dissemination, rotation, lag 1, testall progress, the ring shuffle of raw ImageNet samples), 16 to 4096
// workers, on a star and a fat-tree platform, at both communication fidelities. Each run is a forked child
// (fresh memory: its ru_maxrss is the case's peak). The setup (platform, actors, the first step) is left out
// of the per-iteration figure: a recorder stamps the wall clock when every worker has finished step k, and
// an iteration is (stamp[N] - stamp[1]) / (N - 1); `run s` is the whole run in its child, which is what a run
// costs where the communication goes on beside the workers' steps (bidmach_grid's rounds). A case predicted (from the
// smaller sizes of its series) to take more than --budget-s is skipped, and so are the larger sizes after it. Then SMPI
// side by side.
#include "experiments/bench/bench_scale.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "core/child_process.hpp"
#include "experiments/bench/bench.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/results.hpp"
#include "experiments/runner_sim/run_sim.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "sim/launcher.hpp"

namespace dts::bench {
namespace scale {

namespace fs = std::filesystem;

nlohmann::json platform_json(const std::string& name, int ranks) {
  const fs::path dir = fs::path(DTS_SOURCE_DIR) / "platforms";
  if (name == "star") return {{"base", (dir / "ec2_10g.json").string()}};
  if (name == "fat_tree") {
    const int leaves = std::max(1, (ranks + 31) / 32);
    return {{"base", (dir / "fat_tree_ib.json").string()}, {"fat_tree", {{"down", {32, leaves}}}}};
  }
  throw InputError("--platforms", "unknown platform '" + name + "' (star, fat_tree)");
}

sim::PlatformSpec platform_spec(const std::string& name, int ranks) {
  return sim::read_platform(platform_json(name, ranks), "bench scale", "/platform", DTS_SOURCE_DIR);
}

namespace {
double wall_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ChildResult in_child(const std::function<ChildResult()>& fn, double limit_s) {
  ChildProcess child([&](int fd) {
    alarm(static_cast<unsigned>(std::ceil(limit_s)));  // a runaway case dies of SIGALRM
    ChildResult r;
    const double t0 = wall_now_s();
    try {
      r = fn();
      r.total_s = wall_now_s() - t0;
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << '\n';
      r.ok = false;
    }
    if (write(fd, &r, sizeof r) != sizeof r) r.ok = false;
    return r.ok ? 0 : 1;
  });
  ChildResult r;
  const std::string bytes = child.read_all();
  if (bytes.size() == sizeof r) std::memcpy(&r, bytes.data(), sizeof r);
  const ChildExit e = child.wait();
  r.peak_mb = static_cast<double>(e.usage.ru_maxrss) / 1024.0;  // KiB on Linux
  if (!e.exited() || e.code() != 0) r.ok = false;
  return r;
}

double predict_s(const std::vector<std::pair<int, double>>& known, int workers) {
  if (known.empty()) return -1;
  const auto [p1, t1] = known.back();
  double exponent = 2;
  if (known.size() >= 2) {
    const auto [p0, t0] = known[known.size() - 2];
    exponent = std::clamp(std::log(t1 / t0) / std::log(static_cast<double>(p1) / p0), 1.0, 2.5);
  }
  return t1 * std::pow(static_cast<double>(workers) / p1, exponent);
}

double growth_exponent(int p0, double v0, int p1, double v1) {
  return std::log(v1 / v0) / std::log(static_cast<double>(p1) / p0);
}

double predict_mb(const std::vector<std::pair<int, double>>& peaks, int workers) {
  if (peaks.empty()) return -1;
  return peaks.back().second * workers / peaks.back().first;
}

bool memory_allows(double predicted_mb) {
  const double available_mb =
      static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
  return predicted_mb < 0.4 * available_mb;
}

}  // namespace scale

namespace {

using scale::ChildResult;

struct Options {
  std::vector<int> workers{16, 64, 256, 1024, 4096};
  std::vector<std::string> algos{"ring", "tree", "gossip", "async_sgd", "gossipgrad"};
  std::vector<std::string> fidelities{"collective", "message"};
  std::vector<std::string> platforms{"star", "fat_tree"};
  int reps = 3;
  std::int64_t steps = 3;
  double budget_s = 60;
  sim::RingSampling rings;
  std::string line_round_timing = "flows";            // run.line_round_timing (bidmach_grid)
  bool quick = false, smpi = false, no_smpi = false;  // SMPI beside unless --no-smpi; with --quick only if --smpi
};

// Stamps the wall and simulated clocks when every worker has finished step k (workers only: a parameter
// server's model clock is not an iteration).
struct Stamps {
  int workers = 0;
  std::map<std::int64_t, int> done;
  std::map<std::int64_t, std::pair<double, double>> at;  // step -> (wall s, simulated s)
};

class StampRecorder final : public Recorder {
 public:
  StampRecorder(Comm& comm, Stamps& stamps, bool worker) : comm_(comm), stamps_(stamps), worker_(worker) {}
  void step(std::int64_t step, float) override {
    if (worker_ && ++stamps_.done[step] == stamps_.workers) stamps_.at[step] = {scale::wall_now_s(), comm_.now_s()};
  }
  bool eval_due(std::int64_t) const override { return false; }
  void evaluate(std::int64_t, ConstSlice, bool) override {}

 private:
  Comm& comm_;
  Stamps& stamps_;
  bool worker_;
};

nlohmann::json experiment(const std::string& algo, const std::string& platform, const std::string& fidelity,
                          int workers, std::int64_t steps, const Options& o) {
  constexpr long kImagenetTrain = 1'281'167, kBatch = 32;
  nlohmann::json a = {{"workers", workers}, {"batch_size", kBatch}, {"optimizer", {{"kind", "sgd"}, {"lr", 0.1}}}};
  if (algo == "ring" || algo == "tree" || algo == "hypercube") {
    a["name"] = "allreduce_sgd";
    a["allreduce"] = algo;
  } else if (algo == "gossipgrad_noshuffle") {  // GossipGraD's exchange alone, for its cost apart
    a["name"] = "gossipgrad";
    a["shuffle"] = false;
  } else {
    a["name"] = algo == "gossip" ? "gossip_sgd" : algo;
  }
  const int ranks = algo == "async_sgd" ? workers + 1 : workers;
  // ImageNet's 1,281,167 training samples are less than a batch per worker beyond 40,036 workers: there the
  // (modeled) set has one batch per worker.
  nlohmann::json data = {{"name", "imagenet"}, {"modeled", true}};
  if (workers * kBatch > kImagenetTrain) data["train_samples"] = workers * kBatch;
  return {{"schema_version", 1},
          {"name", "bench_scale"},
          {"seed", 1},
          {"platform", scale::platform_json(platform, ranks)},
          {"model", {{"name", "resnet50"}, {"numerics", "modeled"}}},
          {"data", data},
          {"algorithm", a},
          {"run",
           {{"steps", steps},
            {"eval_every_steps", 0},
            {"fidelity", fidelity},
            {"ring_flow_budget", o.rings.flow_budget},
            {"ring_sample_steps", o.rings.sample_steps},
            {"line_round_timing", o.line_round_timing}}}};
}

ChildResult run_case(const exp::Plan& plan) {
  Stamps stamps;
  stamps.workers = plan.workers;
  const int first_worker = plan.ranks - plan.workers;
  sim::SimJob job = exp::sim_job(plan);
  job.make_recorder = [&](Comm& comm) -> std::unique_ptr<Recorder> {
    return std::make_unique<StampRecorder>(comm, stamps, comm.rank() >= first_worker);
  };
  const double t0 = scale::wall_now_s();
  sim::run_simulation(job);
  ChildResult r;
  const auto first = stamps.at.find(1), last = stamps.at.find(plan.steps);
  if (first == stamps.at.end() || last == stamps.at.end() || plan.steps < 2) return r;
  const double n = static_cast<double>(plan.steps - 1);
  r.ok = true;
  r.setup_s = first->second.first - t0;
  r.wall_per_s = (last->second.first - first->second.first) / n;
  r.sim_per_s = (last->second.second - first->second.second) / n;
  return r;
}

double children_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::string mb(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

int run_scale(Options o) {
  if (o.smpi && o.no_smpi) throw InputError("--smpi", "give --smpi or --no-smpi, not both");
  const bool smpi = o.smpi || (!o.no_smpi && !o.quick);
  if (o.quick) {
    o.workers = {16};
    o.platforms = {"star"};
    o.reps = 1;
    o.steps = 2;
  }
  if (o.steps < 2) throw InputError("--steps", "at least 2 (the first step is setup)");
  std::cout << "dtsim bench scale: resnet50 (modeled numerics, 102 MB of fp32 gradient), modeled imagenet, batch 32"
            << " per worker, run.ring_flow_budget " << o.rings.flow_budget << ", run.ring_sample_steps "
            << o.rings.sample_steps << ", run.line_round_timing " << o.line_round_timing
            << "; wall s per simulated iteration over steps 2.." << o.steps
            << " (setup and step 1 apart), median (min-max) of up to " << o.reps << " runs; peak RSS of the run;"
            << " cases predicted above " << o.budget_s << " s are skipped\n";
  std::printf("%-20s %-8s %-10s %7s  %-26s %-10s %-10s %8s %14s  %s\n", "algorithm", "platform", "fidelity", "workers",
              "wall s/iter", "setup s", "run s", "peak MB", "simulated s/it", "growth wall/MB");
  std::fflush(stdout);
  const LoadProbe probe;
  const double children0_s = children_cpu_s(), table0_s = scale::wall_now_s();
  std::set<std::string> after_steps;  // algorithms whose runs are mostly after their last step
  for (const std::string& platform : o.platforms)
    for (const std::string& algo : o.algos)
      for (const std::string& fidelity : o.fidelities) {
        std::vector<std::pair<int, double>> known, peaks;  // (workers, wall s of one run / peak MB)
        std::vector<std::pair<int, double>> per_iter;      // (workers, median wall s/iter)
        bool skipping = false;
        for (const int P : o.workers) {
          const double predicted = scale::predict_s(known, P), predicted_mb = scale::predict_mb(peaks, P);
          if (skipping || predicted > o.budget_s || !scale::memory_allows(predicted_mb)) {
            skipping = true;
            std::printf("%-20s %-8s %-10s %7d  skipped (predicted %.0f s, %.0f MB: over the budget or memory)\n",
                        algo.c_str(), platform.c_str(), fidelity.c_str(), P, predicted, predicted_mb);
            continue;
          }
          const auto plans = exp::read_experiment(experiment(algo, platform, fidelity, P, o.steps, o),
                                                  DTS_SOURCE_DIR "/experiments/bench/scale.json", exp::sim_reader());
          std::vector<double> wall, setup, peak, sim, run;
          double spent = 0;
          for (int rep = 0; rep < o.reps && (rep == 0 || spent * (rep + 1) / rep <= o.budget_s); ++rep) {
            const ChildResult r = scale::in_child([&] { return run_case(plans.front()); }, 4 * o.budget_s + 60);
            if (!r.ok) break;
            wall.push_back(r.wall_per_s), setup.push_back(r.setup_s), peak.push_back(r.peak_mb);
            sim.push_back(r.sim_per_s), run.push_back(r.total_s);
            spent += r.total_s;
          }
          if (wall.empty()) {
            std::printf("%-20s %-8s %-10s %7d  failed\n", algo.c_str(), platform.c_str(), fidelity.c_str(), P);
            skipping = true;
            continue;
          }
          // The growth exponents of wall s/iter and peak MB in the workers since the previous row ("-" on the first).
          char sim_s[32], setup_s[32], run_s[32], growth[48] = "-";
          const double per_iter_s = stats_of(wall).median, peak_mb = stats_of(peak).max;
          if (!per_iter.empty() && per_iter.back().second > 0 && per_iter_s > 0) {
            std::snprintf(growth, sizeof growth, "%.2f/%.2f",
                          scale::growth_exponent(per_iter.back().first, per_iter.back().second, P, per_iter_s),
                          scale::growth_exponent(peaks.back().first, peaks.back().second, P, peak_mb));
          }
          known.emplace_back(P, spent / static_cast<double>(wall.size()));
          peaks.emplace_back(P, peak_mb);
          per_iter.emplace_back(P, per_iter_s);
          std::snprintf(sim_s, sizeof sim_s, "%.6g", stats_of(sim).median);
          std::snprintf(setup_s, sizeof setup_s, "%.3g", stats_of(setup).median);
          const double whole_s = stats_of(run).median;
          std::snprintf(run_s, sizeof run_s, "%.3g", whole_s);
          std::printf("%-20s %-8s %-10s %7d  %-26s %-10s %-10s %8s %14s  %s\n", algo.c_str(), platform.c_str(),
                      fidelity.c_str(), P, format_stats(stats_of(wall), 3).c_str(), setup_s, run_s, mb(peak_mb).c_str(),
                      sim_s, growth);
          // Where most of the run comes after the workers' last step, s/iter does not say what it costs.
          const double steps_s = stats_of(setup).median + per_iter_s * static_cast<double>(o.steps - 1);
          if (whole_s > 2 * steps_s + 0.25) after_steps.insert(algo);
          std::fflush(stdout);
        }
      }
  for (const std::string& algo : after_steps) {
    std::printf(
        "note: %s: most of its runs' wall comes after the workers' last step (communication beside the "
        "workers, or at the end): run s, not wall s/iter, is what its runs cost\n",
        algo.c_str());
  }
  // The runs are children: their CPU time is ours, not the other tenants'.
  const double children_cores = (children_cpu_s() - children0_s) / (scale::wall_now_s() - table0_s);
  std::printf("machine: %d cores, other tenants busy on %.2f cores on average during the table\n", LoadProbe::cpus(),
              std::max(0.0, probe.other_busy_cores() - children_cores));
  if (smpi) {
    scale::SmpiOptions s;
    s.workers = o.workers;
    for (const auto& a : o.algos)
      if (a == "ring" || a == "tree") s.algos.push_back(a);
    s.platforms = o.platforms;
    s.fidelities = o.fidelities;
    s.bytes = 4.0 * 25'557'032;  // resnet50's parameters in fp32
    s.reps = o.reps;
    s.budget_s = o.budget_s;
    if (!s.algos.empty()) scale::smpi_side_by_side(s);
  }
  return 0;
}

}  // namespace

Command add_scale_bench(CLI::App& bench) {
  auto o = std::make_shared<Options>();
  CLI::App* app = bench.add_subcommand("scale", "wall s per simulated iteration and peak memory, 16-4096 workers");
  app->add_option("--workers", o->workers, "worker counts")->delimiter(',');
  app->add_option("--algos", o->algos,
                  "ring, tree, hypercube (allreduce_sgd), gossip (gossip_sgd), async_sgd, gossipgrad, "
                  "gossipgrad_noshuffle (its ring shuffle off), agd, elastic_gossip, bidmach_grid, mpca (with "
                  "their defaults)")
      ->delimiter(',')
      ->check(CLI::IsMember({"ring", "tree", "hypercube", "gossip", "async_sgd", "gossipgrad", "gossipgrad_noshuffle",
                             "agd", "elastic_gossip", "bidmach_grid", "mpca"}));
  app->add_option("--fidelity", o->fidelities, "collective and/or message")
      ->delimiter(',')
      ->check(CLI::IsMember({"collective", "message"}));
  app->add_option("--platforms", o->platforms, "star (ec2_10g), fat_tree (fat_tree_ib)")
      ->delimiter(',')
      ->check(CLI::IsMember({"star", "fat_tree"}));
  app->add_option("--reps", o->reps, "runs per case")->check(CLI::PositiveNumber);
  app->add_option("--steps", o->steps, "steps per worker per run (>= 2; step 1 counts as setup)");
  app->add_option("--budget-s", o->budget_s, "per-case wall budget: skip cases predicted above it")
      ->check(CLI::PositiveNumber);
  app->add_option("--ring-flow-budget", o->rings.flow_budget, "run.ring_flow_budget of the runs (collective fidelity)")
      ->check(CLI::PositiveNumber);
  app->add_option("--ring-sample-steps", o->rings.sample_steps, "run.ring_sample_steps of the runs")
      ->check(CLI::PositiveNumber);
  app->add_option("--line-round-timing", o->line_round_timing, "run.line_round_timing of the runs: flows or nic")
      ->check(CLI::IsMember({"flows", "nic"}));
  app->add_flag("--no-smpi", o->no_smpi, "leave out the SMPI side by side");
  app->add_flag("--smpi", o->smpi, "run the SMPI side by side with --quick too");
  app->add_flag("--quick", o->quick, "smoke run: 16 workers, star, 2 steps, 1 run, no SMPI unless --smpi");
  return {app, [o] { return run_scale(*o); }};
}

}  // namespace dts::bench
