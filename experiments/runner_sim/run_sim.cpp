// Running plans on the simulator and writing their result directories.
#include "experiments/runner_sim/run_sim.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/child_process.hpp"
#include "experiments/runner/metrics.hpp"
#include "experiments/runner/replicas.hpp"
#include "experiments/runner/result_dir.hpp"
#include "experiments/runner/results.hpp"
#include "experiments/runner/run.hpp"
#include "experiments/runner_sim/breakdown.hpp"
#include "experiments/runner_sim/chrome_trace.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "sim/sim_compute.hpp"

namespace fs = std::filesystem;

namespace dts::exp {

sim::SimJob sim_job(const Plan& plan) {
  const SimInput& in = sim_input(plan);
  auto setup = std::make_shared<sim::ModelSetup>();
  setup->trainer = trainer_setup(plan);
  setup->step_time_s = plan.step_time_s;
  setup->scenario = *plan.scenario;
  sim::SimJob job;
  job.platform = in.platform;
  job.ranks = plan.ranks;
  job.workers = plan.workers;
  job.steps = plan.steps;
  job.seed = plan.seed;
  job.fidelity = in.fidelity;
  job.rings = in.rings;
  job.lines = in.lines;
  job.main = plan.main;
  job.scenario = *plan.scenario;
  if (!plan.real) job.rank_stack_kib = sim::kModeledRankStackKiB;
  job.make_compute = [setup, &in](Rank r, simgrid::s4u::Host* host, sim::TimeAccount* account,
                                  sim::Wires& wires) -> std::unique_ptr<Compute> {
    return std::make_unique<sim::SimCompute>(*setup, r, in.platform, host, account, wires);
  };
  return job;
}

void run_plan(const Plan& plan, const std::string& dir, const std::vector<std::string>& simgrid_args,
              const std::string& label) {
  MetricsLog log;
  std::unique_ptr<Evaluator> evaluator;
  if (plan.real) evaluator = std::make_unique<Evaluator>(plan.model, trainer_setup(plan).backend, plan.data->test);
  Progress progress(label, plan.steps);
  std::optional<InProcessReplicas> replicas;
  if (evaluator) replicas.emplace(plan.workers, *evaluator, log);

  sim::SimJob job = sim_job(plan);
  job.simgrid_args = simgrid_args;
  // With --cfg=tracing:yes SimGrid writes its Paje trace here, one per variant (not into the current directory).
  fs::create_directories(dir);
  job.simgrid_args.push_back("--cfg=tracing/filename:" + (fs::path(dir) / "simgrid.trace").string());
  const std::string& trace = sim_input(plan).trace;
  if (trace == "paje") {  // the platform, and the use of hosts and links over time
    for (const char* a : {"--cfg=tracing:yes", "--cfg=tracing/platform:yes", "--cfg=tracing/uncategorized:yes"})
      job.simgrid_args.emplace_back(a);
  }
  std::optional<ChromeTrace> chrome;
  if (trace == "chrome") {
    chrome.emplace((fs::path(dir) / "trace.json").string());
    job.spans = &*chrome;
  }
  job.make_recorder = [&](Comm& comm) -> std::unique_ptr<Recorder> {
    return std::make_unique<MetricsRecorder>(
        comm, log, evaluator.get(), &progress,
        Cadence{plan.eval_every_steps, plan.log_every_steps, plan.eval_replicas, plan.measure_from_step},
        replicas ? &*replicas : nullptr);
  };
  const sim::SimOutcome outcome = sim::run_simulation(job);
  if (chrome) chrome->close();
  progress.done(outcome.simulated_time_s);

  nlohmann::json versions = dtsim_versions();
  versions["simgrid"] = sim::simgrid_version();
  const RunOutcome totals{"simulated", outcome.simulated_time_s, outcome.messages, outcome.bytes_sent,
                          outcome.bytes_received};
  for (const sim::ActorTimes& a : outcome.actor_times) {  // a rank's idle time: its main actor's own
    if (a.main && a.rank >= 0) log.rank(a.rank).idle_s = a.own[static_cast<std::size_t>(sim::TimeCategory::kIdle)];
  }
  for (Rank r = 0; r < static_cast<Rank>(outcome.waited_on.size()); ++r)
    log.rank(r).waited_on = outcome.waited_on[static_cast<std::size_t>(r)];
  nlohmann::json s = summary(plan, totals, log);
  s["time_breakdown"] =
      time_breakdown(outcome.actor_times, plan.ranks, plan.workers, master_rank(plan), outcome.simulated_time_s);
  write_results(dir, plan, {{"versions", versions}, {"simgrid_args", simgrid_args}}, log, s);
}

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_interrupt(int) { g_interrupted = 1; }

// Waits for the child running one plan; on SIGINT/SIGTERM stops it instead, so that the caller can remove the
// partial result directory. Returns the child's exit code (130 when interrupted).
int wait_child(ChildProcess& child) {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;  // no SA_RESTART: the wait returns EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const ChildExit e = child.wait([] { return g_interrupted != 0; });
  if (e.stopped) return 130;
  if (e.exited()) return e.code();
  std::cerr << "error: the run died (signal " << e.signal() << ")\n";
  return 1;
}

}  // namespace

int run_experiment(const RunOptions& opt) {
  const std::vector<Plan> plans = load_experiment(opt.experiment_file, opt.sets, sim_reader());  // all input checked
  const OutDir out = check_out_dir(opt.out_dir, plans.front().experiment, opt.force);
  check_simulation(plans, opt.simgrid_args);  // SimGrid's side of the input, in a child process
  if (opt.check_only) {                       // --check: one line per plan, nothing written
    for (const Plan& plan : plans) {
      std::cout << (plan.variant.empty() ? plan.experiment : plan.variant) << ": ok, " << plan.algorithm << ", "
                << plan.workers << " workers, " << plan.ranks << " ranks, " << plan.steps << " steps\n";
    }
    return 0;
  }
  PartialDir partial(out);

  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& plan = plans[i];
    const std::string label = Progress::label(plan.variant.empty() ? plan.experiment : plan.variant, i, plans.size());
    const fs::path dir = plan.variant.empty() ? partial.path() : partial.path() / plan.variant;
    std::cout.flush();
    ChildOptions opts;  // one simulation per process, which dies with its parent (even by SIGKILL)
    opts.pipe = ChildOptions::Pipe::kNone;
    opts.die_with_parent = true;
    ChildProcess child(
        [&](int) {
          try {
            run_plan(plan, dir.string(), opt.simgrid_args, label);
          } catch (const InputError& e) {
            std::cerr << "input error: " << e.what() << '\n';
            return 2;
          } catch (const std::exception& e) {
            std::cerr << "error: " << e.what() << '\n';
            return 1;
          }
          return 0;
        },
        opts);
    const int code = wait_child(child);
    if (code != 0) return code;  // the partial directory goes with `partial`
  }
  partial.publish();
  std::vector<std::pair<std::string, nlohmann::json>> results;
  for (const Plan& plan : plans) {
    const fs::path dir = plan.variant.empty() ? out.path : out.path / plan.variant;
    std::ifstream in(dir / "summary.json");
    const auto s = nlohmann::json::parse(in);
    results.emplace_back(plan.variant.empty() ? plan.experiment : plan.variant, s);
    std::cout << (plan.variant.empty() ? plan.experiment : plan.variant) << ": simulated "
              << s["simulated_time_s"].get<double>() << " s";
    if (!s["test_accuracy"].is_null()) std::cout << ", test accuracy " << s["test_accuracy"].get<double>();
    std::cout << "  -> " << shown(dir).string() << '\n';
  }
  std::cout << breakdown_table(results);
  return 0;
}

}  // namespace dts::exp
