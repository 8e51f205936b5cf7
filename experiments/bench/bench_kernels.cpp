// `dtsim bench kernels`: training throughput of dtsim's oneDNN kernels against PyTorch (CPU) on the same
// models, batch sizes, optimizers and thread counts as peers/torch_throughput.py, in the same run. Our loop is
// that script's: forward, mean cross-entropy, backward and the optimizer step, cycling over 16 preloaded
// random batches; warm-up, 10 calibration steps, then timed windows. Each configuration runs `rounds` times,
// ours then the peer's (a separate process), so that a neighbour on the shared VM hits both alike; the ratio
// is taken per round and its median printed. GFLOP/s count the model's cost() flops (forward + backward,
// elementwise layers included) against this machine's SGEMM (oneDNN's here, OpenBLAS's through peers/sgemm.py).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#ifdef DTS_WITH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "core/errors.hpp"
#include "experiments/bench/bench.hpp"
#include "kernels/model/network.hpp"
#include "kernels/model/optimizer.hpp"
#include "kernels/rng.hpp"

namespace dts::bench {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> configs{"mlp:128", "mlp:32", "lenet:64", "cifar10_quick:100"};
  std::vector<int> threads{1, 2};
  int rounds = 2, windows = 3, warmup = 20;
  double window_s = 1.0;
  bool quick = false, no_peer = false, no_peak = false;
  std::string peers_dir, python = "/usr/bin/python3";
};

// The peer's name, input shape and optimizer for one of our models (peers/anchors_common.py).
struct ModelSpec {
  std::string peer;
  int c = 1, h = 28, w = 28;
  model::OptimizerConfig opt;
};

ModelSpec spec_of(const std::string& name) {
  ModelSpec s;
  s.peer = name;
  if (name == "mlp" || name == "mlp_dropout") {  // Nesterov, lr 0.001, momentum 0.99
    s.opt.kind = "nesterov", s.opt.lr = 0.001, s.opt.momentum = 0.99;
  } else if (name == "lenet") {  // Caffe lenet_solver
    s.opt.kind = "momentum", s.opt.lr = 0.01, s.opt.momentum = 0.9, s.opt.weight_decay = 5e-4;
  } else if (name == "cifar10_quick") {  // Caffe cifar10_quick_solver
    s.peer = "cifar_quick", s.c = 3, s.h = 32, s.w = 32;
    s.opt.kind = "momentum", s.opt.lr = 0.001, s.opt.momentum = 0.9, s.opt.weight_decay = 4e-3;
  } else {
    throw InputError("--configs", "no PyTorch peer for model '" + name + "' (mlp, mlp_dropout, lenet, cifar10_quick)");
  }
  return s;
}

// Our training loop over preloaded batches: x ~ N(0, 1), y uniform in [0, 10), as torch.randn / randint.
class OurLoop {
 public:
  static constexpr int kBatches = 16;
  OurLoop(const std::string& name, int batch)
      : spec_(spec_of(name)),
        batch_(batch),
        net_(model::make_network(name, model::Backend::kOnednn, spec_.c, spec_.h, spec_.w, 10)),
        opt_(spec_.opt, net_->num_params()) {
    params_.resize(net_->num_params());
    grads_.resize(net_->num_params());
    net_->init_params(params_, 0);
    Rng rng(0, 0, "bench_kernels");
    const std::size_t sample = static_cast<std::size_t>(spec_.c) * spec_.h * spec_.w;
    x_.resize(kBatches * batch * sample);
    y_.resize(kBatches * static_cast<std::size_t>(batch));
    for (float& v : x_) v = static_cast<float>(rng.normal());
    for (auto& v : y_) v = static_cast<std::int32_t>(rng.below(10));
  }
  void run(int steps) {
    const std::size_t xs = x_.size() / kBatches, ys = y_.size() / kBatches;
    for (int s = 0; s < steps; ++s, ++step_) {
      const std::size_t b = static_cast<std::size_t>(step_ % kBatches);
      net_->forward_backward(params_, grads_, std::span<const float>(x_).subspan(b * xs, xs),
                             std::span<const std::int32_t>(y_).subspan(b * ys, ys), batch_,
                             static_cast<std::uint64_t>(step_));
      opt_.step(params_, grads_);
    }
  }
  // Forward + backward flops of one sample, from the network's cost model.
  double flops_per_sample() const {
    double f = 0;
    for (const auto& c : net_->cost()) f += c.fwd_flops_per_sample + c.bwd_flops_per_sample;
    return f;
  }
  const ModelSpec& spec() const { return spec_; }

 private:
  ModelSpec spec_;
  int batch_;
  std::unique_ptr<model::Network> net_;
  model::Optimizer opt_;
  std::vector<float> params_, grads_, x_;
  std::vector<std::int32_t> y_;
  std::int64_t step_ = 0;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Samples/s of each window and how busy the rest of the machine was meanwhile.
struct Windows {
  std::vector<double> sps, other;
  void add(const Windows& w) {
    sps.insert(sps.end(), w.sps.begin(), w.sps.end());
    other.insert(other.end(), w.other.begin(), w.other.end());
  }
};

Windows time_ours(OurLoop& loop, int batch, const Options& o) {
  loop.run(o.warmup);
  double t0 = now_s();
  loop.run(10);
  const double per_step = (now_s() - t0) / 10;
  const int steps = std::max(o.quick ? 2 : 5, static_cast<int>(o.window_s / per_step));
  Windows w;
  for (int i = 0; i < o.windows; ++i) {
    const LoadProbe probe;
    t0 = now_s();
    loop.run(steps);
    w.sps.push_back(steps * batch / (now_s() - t0));
    w.other.push_back(probe.other_busy_cores());
  }
  return w;
}

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

std::string find_peers_dir(const Options& o) {
  if (!o.peers_dir.empty()) return o.peers_dir;
  if (const char* env = std::getenv("DTS_PEERS_DIR")) return env;
  for (const fs::path& p :
       {fs::path(DTS_SOURCE_DIR) / ".." / "shared" / "peers", fs::path(DTS_SOURCE_DIR) / "shared" / "peers"})
    if (fs::exists(p / "torch_throughput.py")) return p.lexically_normal().string();
  return "";
}

// Environment of a peer run: OpenBLAS's AVX-512 kernels. Debian's 0.3.21 does not know this CPU, and a
// machine-wide OPENBLAS_CORETYPE (this project's image sets Haswell) would hold the peer back as well, so it
// is not inherited: DTS_PEER_OPENBLAS_CORETYPE picks another.
std::string peer_env() {
  const char* core = std::getenv("DTS_PEER_OPENBLAS_CORETYPE");
  return std::string("OPENBLAS_CORETYPE=") + (core ? core : "Cooperlake") + " ";
}

// One run of peers/torch_throughput.py; empty windows if it failed.
Windows time_peer(const Options& o, const std::string& dir, const ModelSpec& spec, int batch, int threads) {
  std::ostringstream cmd;
  cmd << peer_env() << o.python << ' ' << shell_quote(dir + "/torch_throughput.py") << " --model " << spec.peer
      << " --batch " << batch << " --threads " << threads << " --warmup " << o.warmup << " --repeats " << o.windows
      << " --window-s " << o.window_s << " 2>/dev/null";
  int code = 0;
  const std::string out = capture(cmd.str(), code);
  Windows w;
  const auto line = out.find_last_of('{') == std::string::npos ? std::string() : out.substr(out.rfind("\n{") + 1);
  if (code != 0 || line.empty()) {
    std::cerr << "peer failed (exit " << code << "): " << cmd.str() << '\n';
    return w;
  }
  const auto j = nlohmann::json::parse(line);
  w.sps = j.at("windows_samples_per_s").get<std::vector<double>>();
  w.other = j.at("windows_other_busy_cores").get<std::vector<double>>();
  return w;
}

// GFLOP/s of a 2048^3 SGEMM: oneDNN's (our kernels' library) in this process.
double onednn_sgemm_gflops() {
#ifdef DTS_WITH_ONEDNN
  const dnnl_dim_t n = 2048;
  std::vector<float> a(n * n, 1.0f), b(n * n, 0.5f), c(n * n);
  std::vector<double> g;
  for (int r = 0; r < 4; ++r) {
    const double t0 = now_s();
    dnnl::sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    if (r > 0) g.push_back(2.0 * n * n * n / (now_s() - t0) / 1e9);
  }
  return stats_of(g).median;
#else
  return 0;
#endif
}

// numpy.matmul (OpenBLAS) 2048^3 through peers/sgemm.py; 0 if it failed.
double peer_sgemm_gflops(const Options& o, const std::string& dir, int threads) {
  int code = 0;
  const std::string out = capture(peer_env() + o.python + " " + shell_quote(dir + "/sgemm.py") + " --threads " +
                                      std::to_string(threads) + " --which numpy --reps 5 2>/dev/null",
                                  code);
  if (code != 0 || out.find('{') == std::string::npos) return 0;
  return nlohmann::json::parse(out.substr(out.find('{'))).at("numpy_matmul").at("gflops").at("median").get<double>();
}

// "median (min-max)" over the uncontended windows, or over all of them (marked "noisy") when none was.
std::string summarize(const Windows& w, int threads, Stats& out) {
  std::vector<double> quiet;
  for (std::size_t i = 0; i < w.sps.size(); ++i)
    if (uncontended(w.other[i], threads)) quiet.push_back(w.sps[i]);
  const bool noisy = quiet.size() * 2 < w.sps.size();
  out = stats_of(noisy ? w.sps : quiet);
  return format_stats(out, 4) + (noisy ? " noisy" : "");
}

int run_kernels(Options o) {
  if (o.quick) {
    o.rounds = 1, o.windows = 2, o.warmup = 2, o.window_s = 0.02, o.no_peer = true, o.no_peak = true;
    o.threads = {1};
  }
  const std::string dir = o.no_peer ? "" : find_peers_dir(o);
  bool peer = !o.no_peer;
  if (peer && dir.empty()) {
    std::cout << "peer: peers/torch_throughput.py not found (give --peers DIR or DTS_PEERS_DIR); ours only\n";
    peer = false;
  }
  if (peer) {
    int code = 0;
    capture(o.python + " -c 'import torch' >/dev/null 2>&1", code);
    if (code != 0) {
      std::cout << "peer: " << o.python << " cannot import torch; install it with\n"
                << "  apt-get install python3-torch python3-numpy libopenblas0-openmp\n"
                << "(OPENBLAS_CORETYPE=Cooperlake is set for the peer runs). Ours only.\n";
      peer = false;
    }
  }
  std::cout << "dtsim bench kernels: training samples/s, median (min-max) over timed windows of ~" << o.window_s
            << " s, " << o.rounds << " round(s) of " << o.windows << " windows; ratio = ours / PyTorch per round\n";
  if (peer) std::cout << "peer: PyTorch CPU (" << dir << "/torch_throughput.py, " << peer_env() << ")\n";
  std::cout << "A window where other tenants left less than a free core per thread is contended; figures come from "
               "uncontended windows, 'noisy' when most were contended.\n\n";
  for (const int threads : o.threads) {
    omp_set_num_threads(threads);
    double peak = 0, peer_peak = 0;
    if (!o.no_peak) {
      peak = onednn_sgemm_gflops();
      if (peer) peer_peak = peer_sgemm_gflops(o, dir, threads);
      std::printf("threads %d: SGEMM 2048^3 oneDNN %.0f GFLOP/s, OpenBLAS (numpy) %.0f GFLOP/s\n", threads, peak,
                  peer_peak);
    }
    std::printf("%-14s %5s %3s  %-26s %-26s %-20s %s\n", "model", "batch", "thr", "ours samples/s", "PyTorch samples/s",
                "ratio ours/torch", "ours GFLOP/s (% SGEMM)");
    for (const std::string& cfg : o.configs) {
      const auto colon = cfg.find(':');
      if (colon == std::string::npos) throw InputError("--configs", "expected MODEL:BATCH, got '" + cfg + "'");
      const std::string name = cfg.substr(0, colon);
      const int batch = std::stoi(cfg.substr(colon + 1));
      OurLoop loop(name, batch);
      Windows ours, theirs;
      std::vector<double> ratios;
      for (int r = 0; r < o.rounds; ++r) {
        const Windows a = time_ours(loop, batch, o);
        ours.add(a);
        if (!peer) continue;
        const Windows b = time_peer(o, dir, loop.spec(), batch, threads);
        if (b.sps.empty()) continue;
        theirs.add(b);
        ratios.push_back(stats_of(a.sps).median / stats_of(b.sps).median);
      }
      Stats s_ours, s_theirs;
      const std::string a = summarize(ours, threads, s_ours);
      const std::string b = theirs.sps.empty() ? "-" : summarize(theirs, threads, s_theirs);
      const std::string ratio = ratios.empty() ? "-" : format_stats(stats_of(ratios), 3);
      const double gflops = loop.flops_per_sample() * s_ours.median / 1e9;
      char eff[48];
      std::snprintf(eff, sizeof eff, "%.1f (%.0f %%)", gflops, peak > 0 ? 100 * gflops / peak : 0.0);
      std::printf("%-14s %5d %3d  %-26s %-26s %-20s %s\n", name.c_str(), batch, threads, a.c_str(), b.c_str(),
                  ratio.c_str(), eff);
      std::fflush(stdout);
    }
    std::cout << '\n';
  }
  return 0;
}

}  // namespace

Command add_kernels_bench(CLI::App& bench) {
  auto o = std::make_shared<Options>();
  CLI::App* app = bench.add_subcommand("kernels", "training throughput of our oneDNN kernels against PyTorch");
  app->add_option("--configs", o->configs, "MODEL:BATCH list (models: mlp, mlp_dropout, lenet, cifar10_quick)")
      ->delimiter(',');
  app->add_option("--threads", o->threads, "OpenMP thread counts")->delimiter(',');
  app->add_option("--rounds", o->rounds, "ours-then-peer rounds per configuration")->check(CLI::PositiveNumber);
  app->add_option("--windows", o->windows, "timed windows per round")->check(CLI::PositiveNumber);
  app->add_option("--window-s", o->window_s, "seconds per window")->check(CLI::PositiveNumber);
  app->add_option("--warmup", o->warmup, "warm-up steps")->check(CLI::NonNegativeNumber);
  app->add_option("--peers", o->peers_dir, "folder of torch_throughput.py (default: DTS_PEERS_DIR, ../shared/peers)");
  app->add_option("--python", o->python, "Python with torch (Debian's python3-torch)");
  app->add_flag("--no-peer", o->no_peer, "ours only");
  app->add_flag("--no-peak", o->no_peak, "skip the SGEMM peak measurements");
  app->add_flag("--quick", o->quick, "smoke run: every configuration briefly, 1 thread, no peer");
  return {app, [o] { return run_kernels(*o); }};
}

}  // namespace dts::bench
