// `dtsim bench overhead`: what the simulator adds to the wall time of a real-numerics run. The default
// experiment (8 workers, MLP, batch 32, Fashion-MNIST), shortened to N steps, runs on the simulator as
// `dtsim run` runs it (evaluation off); then the same training steps run in a plain loop: one Trainer per rank,
// the same forward_backward and optimizer_step calls, the same update arithmetic, and the copies that the
// algorithm's messages make between the buffers its ranks own, without the messages, actors or snapshots, in
// buffers of the same kind (huge pages). allreduce_sgd (ring): the ring's plan run stage by stage over the
// workers' gradients, each receive an add or a copy of its chunk straight from the sending worker's buffer (the
// chunks the simulated messages carry, in the order of their steps), then the average. easgd_async with tau = 1: each
// worker's weights copied into one of the center's two receive buffers, the center into the worker's receive buffer,
// then the elastic updates of center and worker. Each run is a child process (SimGrid allows one engine per
// process; fresh memory for both), and the ratio is taken per pair.
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>

#include "algorithms/collectives/plans.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "core/child_process.hpp"
#include "experiments/bench/bench.hpp"
#include "experiments/runner/metrics.hpp"
#include "experiments/runner/results.hpp"
#include "experiments/runner_sim/run_sim.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "kernels/huge_pages.hpp"
#include "kernels/model/trainer.hpp"
#include "sim/launcher.hpp"

namespace dts::bench {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::vector<std::string> algorithms{"allreduce_sgd", "easgd_async"};
  std::string experiment;
  std::int64_t steps = 40;
  int runs = 3, threads = 0;
  bool quick = false;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}

// Wall and CPU seconds (all threads) of one run; the CPU time hardly moves when a neighbour takes a core.
struct Timing {
  double wall_s = NAN, cpu_s = NAN;
};

// Touches and frees kWarmBytes of huge pages. A VM's host backs guest memory lazily and takes freed memory
// back, so whichever run first touches memory the host has not backed pays for it (measured: the same
// 288 MiB of buffers cleared in 0.02 s by one run and 0.66 s by the next); warm pages make the two equal.
constexpr std::size_t kWarmBytes = std::size_t{1} << 30;
void warm_memory() {
  void* p = huge_alloc(kWarmBytes);
  std::memset(p, 1, kWarmBytes);
  huge_free(p, kWarmBytes);
}

// Runs fn in a child process and returns the time it took there (NaN if the child failed).
Timing timed_in_child(const std::function<void()>& fn) {
  ChildProcess child([&](int fd) {
    Timing t;
    try {
      warm_memory();
      const double t0 = now_s(), c0 = cpu_s();
      fn();
      t.wall_s = now_s() - t0;
      t.cpu_s = cpu_s() - c0;
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << '\n';
    }
    if (write(fd, &t, sizeof t) != sizeof t) t.wall_s = NAN;
    return std::isnan(t.wall_s) ? 1 : 0;
  });
  Timing t;
  const std::string bytes = child.read_all();
  if (bytes.size() == sizeof t) std::memcpy(&t, bytes.data(), sizeof t);
  child.wait();
  return t;
}

// The simulated run, as exp::run_plan does it, without evaluation and result files.
void simulated(const exp::Plan& plan) {
  exp::MetricsLog log;
  sim::SimJob job = exp::sim_job(plan);
  job.make_recorder = [&](Comm& comm) -> std::unique_ptr<Recorder> {
    return std::make_unique<exp::MetricsRecorder>(comm, log, nullptr, nullptr, exp::Cadence{0, plan.log_every_steps});
  };
  sim::run_simulation(job);
}

// The same steps in a plain loop (see the file comment). Ranks below first_worker_rank are servers.
void bare(const exp::Plan& plan) {
  const model::TrainerSetup setup = exp::trainer_setup(plan);
  std::vector<std::unique_ptr<model::Trainer>> workers;
  std::vector<BigFloats> x, g;  // the buffer type of the simulated ranks (Vec)
  for (int w = 0; w < plan.workers; ++w) {
    workers.push_back(std::make_unique<model::Trainer>(setup, setup.first_worker_rank + w));
    x.emplace_back(workers.back()->num_params());
    g.emplace_back(workers.back()->num_params());
    workers.back()->init_params(x.back());
  }
  const std::size_t n = x[0].size();
  const auto P = static_cast<std::size_t>(plan.workers);
  if (plan.algorithm == "allreduce_sgd") {
    const collectives::RingPlan ring(collectives::RingKind::kAllreduce, plan.workers, n);
    std::vector<Slice> grads;  // the ring's members' buffers
    for (BigFloats& v : g) grads.emplace_back(v);
    for (std::int64_t step = 0; step < plan.steps; ++step) {
      for (std::size_t w = 0; w < P; ++w) workers[w]->forward_backward(x[w], g[w]);
      move_in_place(ring, grads, ring.steps());  // the sum on every rank, as the simulated ring's borrowed sends
      DTS_ASSERT(step > 0 || std::all_of(g.begin(), g.end(), [&](const BigFloats& v) { return v == g[0]; }),
                 "bench overhead: the bare ring left the ranks with different sums");
      for (std::size_t w = 0; w < P; ++w) {
        rules::scale(Slice(g[w]), 1.0f / static_cast<float>(P));
        workers[w]->optimizer_step(x[w], g[w]);
      }
    }
  } else {
    DTS_ASSERT(plan.algorithm == "easgd_async", "bench overhead: run_overhead admits no other algorithm");
    const auto alpha = static_cast<float>(plan.resolved.at("algorithm").at("elastic_alpha").get<double>());
    BigFloats center(n);
    std::array<BigFloats, 2> incoming{BigFloats(n), BigFloats(n)};  // the center's two receive buffers
    std::vector<BigFloats> reply;                                   // each worker's receive buffer
    for (std::size_t w = 0; w < P; ++w) reply.emplace_back(n);
    workers[0]->init_params(center);
    std::size_t next = 0;
    for (std::int64_t step = 0; step < plan.steps; ++step)
      for (std::size_t w = 0; w < P; ++w, next = 1 - next) {
        const Slice in(incoming[next]), c(reply[w]);
        rules::copy(in, Slice(x[w]));                       // 1. the worker's weights reach the center,
        rules::copy(c, Slice(center));                      //    which replies with W~ as it is
        rules::elastic_diff(in, in, Slice(center), alpha);  //    and moves: W~ += a (W - W~)
        rules::axpy(Slice(center), 1.0f, in);
        workers[w]->forward_backward(x[w], g[w]);       // 2. the gradient at W (overlapping the reply)
        rules::elastic_diff(c, Slice(x[w]), c, alpha);  // 3. a (W - W~), over the reply
        workers[w]->optimizer_step(x[w], g[w]);         // 4. W -= eta dW
        rules::axpy(Slice(x[w]), -1.0f, c);             // 5. W -= a (W - W~)
      }
  }
}

std::string default_experiment() {
  return (fs::path(DTS_SOURCE_DIR) / "experiments" / "default" / "default.json").string();
}

int run_overhead(Options o) {
  if (o.quick) o.steps = 2, o.runs = 1;
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const std::string file = o.experiment.empty() ? default_experiment() : o.experiment;
  std::vector<exp::Plan> plans;  // every algorithm's, read and checked before anything runs or prints
  for (const std::string& algo : o.algorithms) {
    if (algo != "allreduce_sgd" && algo != "easgd_async") {
      throw InputError("--algorithms", "no bare loop for '" + algo + "' (allreduce_sgd, easgd_async)");
    }
    std::vector<std::string> sets{"variants=null", "run.epochs=null", "run.steps=" + std::to_string(o.steps),
                                  "run.eval_every_steps=0", "algorithm.name=" + algo};
    if (o.quick) sets.insert(sets.end(), {"algorithm.workers=2", "algorithm.batch_size=8"});
    if (algo == "easgd_async") sets.push_back("algorithm.comm_period_steps=1");
    plans.push_back(exp::load_experiment(file, sets, exp::sim_reader()).front());
    if (algo == "allreduce_sgd" && plans.back().resolved.at("algorithm").value("allreduce", "ring") != "ring") {
      throw InputError(file + ": algorithm.allreduce", "bench overhead's bare loop follows the ring's plan (ring)");
    }
  }
  std::cout << "dtsim bench overhead: wall seconds of " << o.steps << " steps per worker, simulated (real numerics) "
            << "against the same steps in a plain loop; median (min-max) of " << o.runs << " runs, "
            << omp_get_max_threads() << " OpenMP thread(s)\nexperiment: " << file << '\n';
  std::printf("%-14s %7s %6s  %-22s %-22s %-20s %-20s %s\n", "algorithm", "workers", "steps", "simulated wall s",
              "bare wall s", "ratio sim/bare wall", "ratio sim/bare CPU", "worker-step ms (sim, bare)");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const std::string& algo = o.algorithms[i];
    const exp::Plan& plan = plans[i];
    std::vector<double> sim_s, bare_s, ratio, cpu_ratio;
    for (int r = 0; r < o.runs; ++r) {
      // Which of the pair runs first alternates: the first may meet memory the second finds already
      // backed by the host (a VM's first touch of a page is slow).
      Timing a, b;
      if (r % 2 == 0) {
        a = timed_in_child([&] { simulated(plan); });
        b = timed_in_child([&] { bare(plan); });
      } else {
        b = timed_in_child([&] { bare(plan); });
        a = timed_in_child([&] { simulated(plan); });
      }
      if (std::isnan(a.wall_s) || std::isnan(b.wall_s)) throw std::runtime_error("bench overhead: a run failed");
      sim_s.push_back(a.wall_s), bare_s.push_back(b.wall_s);
      ratio.push_back(a.wall_s / b.wall_s), cpu_ratio.push_back(a.cpu_s / b.cpu_s);
    }
    const Stats s = stats_of(sim_s), b = stats_of(bare_s), q = stats_of(ratio), c = stats_of(cpu_ratio);
    const double per = 1e3 / static_cast<double>(plan.steps * plan.workers);
    char ms[64];
    std::snprintf(ms, sizeof ms, "%.2f, %.2f", s.median * per, b.median * per);
    std::printf("%-14s %7d %6lld  %-22s %-22s %-20s %-20s %s\n", algo.c_str(), plan.workers,
                static_cast<long long>(plan.steps), format_stats(s, 4).c_str(), format_stats(b, 4).c_str(),
                format_stats(q, 3).c_str(), format_stats(c, 3).c_str(), ms);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

Command add_overhead_bench(CLI::App& bench) {
  auto o = std::make_shared<Options>();
  CLI::App* app = bench.add_subcommand("overhead", "wall time of simulated real-numerics runs against bare steps");
  app->add_option("--algorithms", o->algorithms, "allreduce_sgd and/or easgd_async")->delimiter(',');
  app->add_option("--experiment", o->experiment, "experiment file (default: experiments/default/default.json)");
  app->add_option("--steps", o->steps, "steps per worker")->check(CLI::PositiveNumber);
  app->add_option("--runs", o->runs, "simulated/bare pairs")->check(CLI::PositiveNumber);
  app->add_option("--threads", o->threads, "OpenMP threads (default: OMP_NUM_THREADS or all cores)");
  app->add_flag("--quick", o->quick, "smoke run: 2 workers, batch 8, 2 steps, 1 pair");
  return {app, [o] { return run_overhead(*o); }};
}

}  // namespace dts::bench
