// Running plans and writing their result directories.
#include "experiments/runner/run.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

#include "experiments/runner/metrics.hpp"
#include "sim/launcher.hpp"
#include "sim/sim_compute.hpp"

#ifndef DTS_GIT_SHA
#define DTS_GIT_SHA "unknown"
#endif
#ifndef DTS_VERSION
#define DTS_VERSION "0"
#endif

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

void write_json(const fs::path& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

nlohmann::json summary(const Plan& plan, const sim::SimOutcome& outcome, const MetricsLog& log) {
  nlohmann::json s;
  s["experiment"] = plan.experiment;
  if (!plan.variant.empty()) s["variant"] = plan.variant;
  s["algorithm"] = plan.algorithm;
  s["model"] = plan.model;
  s["numerics"] = plan.real ? "real" : "modeled";
  s["workers"] = plan.workers;
  s["ranks"] = plan.ranks;
  s["steps_per_worker"] = plan.steps;
  s["simulated_time_s"] = outcome.simulated_time_s;
  s["messages"] = outcome.messages;
  s["bytes_sent_total"] = std::accumulate(outcome.bytes_sent.begin(), outcome.bytes_sent.end(), std::uint64_t{0});
  s["bytes_sent_per_rank"] = outcome.bytes_sent;
  s["bytes_received_per_rank"] = outcome.bytes_received;
  if (log.final_eval) {
    s["test_accuracy"] = log.final_eval->eval->accuracy();
    s["test_loss"] = log.final_eval->eval->mean_loss;
    s["evaluated_at_s"] = log.final_eval->time_s;
    s["final_model_hash"] = log.final_model_hash;
  } else {
    s["test_accuracy"] = nullptr;  // modeled numerics: nothing to evaluate
  }
  return s;
}

}  // namespace

void run_plan(const Plan& plan, const std::string& dir, const std::vector<std::string>& simgrid_args) {
  const std::string label = plan.variant.empty() ? plan.experiment : plan.variant;
  sim::ModelSetup setup;
  model::TrainerSetup& t = setup.trainer;
  t.network = plan.model;
  t.backend = plan.backend == "ref" ? model::Backend::kRef : model::Backend::kOnednn;
  t.real = plan.real;
  t.train = &plan.data->train;
  t.batch = plan.batch;
  t.seed = plan.seed;
  t.optimizer = plan.optimizer;
  t.workers = plan.workers;
  t.first_worker_rank = plan.ranks - plan.workers;
  setup.step_time_s = plan.step_time_s;

  MetricsLog log;
  std::unique_ptr<Evaluator> evaluator;
  if (plan.real) evaluator = std::make_unique<Evaluator>(plan.model, t.backend, plan.data->test);
  Progress progress(label, plan.steps);

  sim::SimJob job;
  job.platform = plan.platform;
  job.ranks = plan.ranks;
  job.workers = plan.workers;
  job.steps = plan.steps;
  job.main = plan.main;
  job.simgrid_args = simgrid_args;
  job.make_compute = [&](Rank r, simgrid::s4u::Host* host) -> std::unique_ptr<Compute> {
    return std::make_unique<sim::SimCompute>(setup, r, plan.platform.device, host);
  };
  job.make_recorder = [&](Comm& comm) -> std::unique_ptr<Recorder> {
    return std::make_unique<MetricsRecorder>(comm, log, evaluator.get(), &progress, plan.eval_every_steps,
                                             plan.log_every_steps);
  };
  const sim::SimOutcome outcome = sim::run_simulation(job);
  progress.done(outcome.simulated_time_s);

  fs::create_directories(dir);
  nlohmann::json resolved = plan.resolved;
  resolved["versions"] = {{"dtsim", DTS_VERSION}, {"git", DTS_GIT_SHA}, {"simgrid", sim::simgrid_version()}};
  write_json(fs::path(dir) / "config.resolved.json", resolved);
  log.write_csv((fs::path(dir) / "metrics.csv").string());
  write_json(fs::path(dir) / "summary.json", summary(plan, outcome, log));
}

int run_experiment(const RunOptions& opt) {
  const std::vector<Plan> plans = load_experiment(opt.experiment_file, opt.sets);  // all input checked here
  const fs::path out = opt.out_dir.empty() ? fs::path("results") / plans.front().experiment : fs::path(opt.out_dir);
  const fs::path partial = out.string() + ".partial-" + std::to_string(getpid());
  fs::remove_all(partial);
  fs::create_directories(partial);

  for (const Plan& plan : plans) {
    const fs::path dir = plan.variant.empty() ? partial : partial / plan.variant;
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // one simulation per process
      int code = 0;
      try {
        run_plan(plan, dir.string(), opt.simgrid_args);
      } catch (const InputError& e) {
        std::cerr << "input error: " << e.what() << '\n';
        code = 2;
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << '\n';
        code = 1;
      }
      std::fflush(nullptr);
      _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (code != 0) {
      if (!WIFEXITED(status)) std::cerr << "error: the run of " << plan.variant << " died (signal)\n";
      fs::remove_all(partial);
      return code;
    }
  }
  if (fs::exists(out)) fs::remove_all(out);
  if (out.has_parent_path()) fs::create_directories(out.parent_path());
  fs::rename(partial, out);
  for (const Plan& plan : plans) {
    const fs::path dir = plan.variant.empty() ? out : out / plan.variant;
    std::ifstream in(dir / "summary.json");
    const auto s = nlohmann::json::parse(in);
    std::cout << (plan.variant.empty() ? plan.experiment : plan.variant) << ": simulated "
              << s["simulated_time_s"].get<double>() << " s";
    if (!s["test_accuracy"].is_null()) std::cout << ", test accuracy " << s["test_accuracy"].get<double>();
    std::cout << "  -> " << dir.string() << '\n';
  }
  return 0;
}

}  // namespace dts::exp
