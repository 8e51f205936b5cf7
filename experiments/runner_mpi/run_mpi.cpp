// `dtsim run --backend mpi`: every rank reads the experiment, the ranks agree that it is valid for this job,
// then run its plans one after another with MpiComm/MpiNode/MpiCompute; rank 0 gathers every rank's
// metrics, writes the result directory (DIR.partial-PID, renamed when complete) and prints progress.
// An exception on a rank ends the job (MPI_Abort): the other ranks would otherwise wait for it forever.
// A scenario's stragglers and jitter slow a rank's compute (realexec/mpi_compute.hpp). Its failures are modeled
// as on the simulator: the failed rank's algorithm ends at its failure (RankGone; MpiComm::fail_at), it reports
// what it recorded until then and stays in the job, draining, until the end; its peers' operations with it
// complete with kPeerFailed, and an algorithm that cannot go on without it stops the job naming it (as any
// rank's error). Test hook: DTS_MPI_FAULT (run_mpi_fault.hpp).
#include "experiments/runner/run.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>

#include "algorithms/api/wait_log.hpp"
#include "experiments/runner/replicas.hpp"
#include "experiments/runner/result_dir.hpp"
#include "experiments/runner/run_mpi.hpp"
#include "experiments/runner_mpi/run_mpi_fault.hpp"
#include "realexec/mpi_comm.hpp"
#include "realexec/mpi_compute.hpp"
#include "realexec/mpi_node.hpp"
#include "realexec/mpi_vector_sums.hpp"

namespace dts::exp {
namespace {

// One rank's Recorder: the shared MetricsRecorder (with rank 0's progress line) behind a mutex (activities
// are threads here), and the fault hook.
class RankRecorder final : public Recorder {
 public:
  RankRecorder(MetricsRecorder& inner, FaultPoint& fault) : inner_(inner), fault_(fault) {}
  void step(std::int64_t step, float loss) override {
    std::lock_guard<std::mutex> lock(mu_);
    fault_.step(step);
    inner_.step(step, loss);
  }
  bool eval_due(std::int64_t step) const override { return inner_.eval_due(step); }
  void evaluate(std::int64_t step, ConstSlice params, bool final) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.evaluate(step, params, final);
  }
  void evaluate_own(std::int64_t step, ConstSlice params) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.evaluate_own(step, params);
  }
  void count(const std::string& name, std::int64_t value) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.count(name, value);
  }
  void event(const std::string& name, const std::vector<std::pair<std::string, double>>& fields) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.event(name, fields);
  }
  void observe(std::int64_t step, ConstSlice params) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_.observe(step, params);
  }

 private:
  std::mutex mu_;
  MetricsRecorder& inner_;
  FaultPoint& fault_;
};

// The workers' observations (Recorder::observe) summed on the first worker by non-blocking reductions, which
// it collects as they complete; the row of a step carries the first worker's clock when it observed it.
class MpiReplicas final : public ReplicaObserver {
 public:
  MpiReplicas(bool trains, int workers, Evaluator& evaluator, MetricsLog& log)
      : sums_(trains), workers_(workers), evaluator_(evaluator), log_(log) {}
  void observe(std::int64_t step, ConstSlice params, double time_s) override {
    ReplicaSum mine;
    mine.add(params, time_s);
    if (sums_.root()) observed_at_[step] = time_s;
    sums_.start(step, std::move(mine.sum));
    record(sums_.poll());
  }
  // Collective over the workers, once the plan's Comm has quiesced.
  void finish() { record(sums_.finish()); }

 private:
  void record(std::vector<std::pair<std::int64_t, std::vector<double>>> done) {
    for (auto& [step, sum] : done) {
      ReplicaSum all{std::move(sum), workers_, observed_at_.at(step)};
      observed_at_.erase(step);
      log_.rows.push_back(aggregate_row(step, all, evaluator_));
    }
  }
  mpi::VectorSums sums_;
  int workers_;
  Evaluator& evaluator_;
  MetricsLog& log_;
  std::map<std::int64_t, double> observed_at_;
};

struct PlanResult {
  std::string subdir;  // "" or the variant's name
  MetricsLog log;
  nlohmann::json summary;
};

std::string plan_where(const RunOptions& opt, const Plan& plan, const std::string& key) {
  return opt.experiment_file + ":" + (plan.variant.empty() ? "" : "/variants[" + plan.variant + "]") + key;
}

// Input checks that only the MPI backend makes: the numerics, the scenario (no link changes), and the job's size
// (`world`; 0: not in a job).
void check_plan(const RunOptions& opt, const Plan& plan, int world) {
  const Scenario& sc = *plan.scenario;
  if (!sc.links.empty()) {
    throw InputError(sc.where + "/links",
                     "link changes are a simulator notion: the MPI backend runs on the machine's own network (only "
                     "stragglers, jitter and failures apply to --backend mpi)");
  }
  const nlohmann::json& run = plan.resolved.at("run");
  if (run.contains("trace") && run["trace"] != "none") {
    throw InputError(plan_where(opt, plan, "/run/trace"),
                     "a timeline of simulated time: the MPI backend writes none (only the simulator does)");
  }
  if (!plan.real) {
    throw InputError(
        plan_where(opt, plan, "/model/numerics"),
        "\"modeled\" runs no kernels; the MPI backend needs \"real\" (modeled numerics need the simulator)");
  }
  if (world != 0 && plan.ranks != world) {
    throw InputError(plan_where(opt, plan, "/algorithm/workers"),
                     plan.algorithm + " with " + std::to_string(plan.workers) + " workers needs " +
                         std::to_string(plan.ranks) + " MPI ranks, but this job has " + std::to_string(world) +
                         " (mpirun -np " + std::to_string(plan.ranks) + ")");
  }
}

// What every rank reads before the job starts; `world` as in check_plan.
std::vector<Plan> load_for_mpi(const RunOptions& opt, int world) {
  if (!opt.simgrid_args.empty())
    throw InputError(opt.simgrid_args.front(), "a SimGrid option; not used with --backend mpi");
  std::vector<Plan> plans = load_experiment(opt.experiment_file, opt.sets, *opt.simulator);
  for (const Plan& plan : plans) check_plan(opt, plan, world);
  return plans;
}

// `--backend mpi --check`, without mpirun: what a job would refuse on input, and the size each plan needs.
int check_experiment_mpi(const RunOptions& opt) {
  const std::vector<Plan> plans = load_for_mpi(opt, /*world=*/0);
  check_out_dir(opt.out_dir, plans.front().experiment, opt.force);
  for (const Plan& plan : plans) {
    std::cout << (plan.variant.empty() ? plan.experiment : plan.variant) << ": ok, " << plan.algorithm << ", "
              << plan.workers << " workers, mpirun -np " << plan.ranks << ", " << plan.steps << " steps\n";
  }
  return 0;
}

std::optional<PlanResult> run_plan_mpi(const Plan& plan, const mpi::MpiSession& session, Fault fault,
                                       double hang_timeout_s, const std::string& label) {
  const Rank rank = session.rank();
  const model::TrainerSetup setup = trainer_setup(plan);
  mpi::RankScenario scenario(*plan.scenario, rank);
  mpi::MpiCompute compute(setup, rank, &scenario);
  Evaluator evaluator(plan.model, setup.backend, plan.data->test);
  MetricsLog log;
  std::optional<Progress> progress;
  if (rank == 0) progress.emplace(label, plan.steps, "wall");

  mpi::MpiComm comm(session, hang_timeout_s);  // collective: every rank starts the plan's clock together
  scenario.start(comm);                        // the scenario's times are on that clock, and it fails the rank
  WaitLog waits;
  comm.set_wait_log(&waits);
  mpi::MpiNode node(rank);
  const bool trains = rank >= plan.ranks - plan.workers;
  MpiReplicas replicas(trains, plan.workers, evaluator, log);  // collective
  MetricsRecorder metrics(
      comm, log, &evaluator, progress ? &*progress : nullptr,
      Cadence{plan.eval_every_steps, plan.log_every_steps, plan.eval_replicas, plan.measure_from_step}, &replicas);
  FaultPoint fault_point(fault, rank, trains);
  std::optional<FaultComm> faulty;
  if (fault_point.armed()) faulty.emplace(comm, fault_point);
  RankRecorder recorder(metrics, fault_point);
  Context ctx{faulty ? static_cast<Comm&>(*faulty) : comm, compute, node, recorder, plan.workers, plan.steps};
  enter_run(ctx, plan.scenario.get());
  try {
    plan.main(ctx);
    fault_point.plan_returned();
  } catch (const mpi::RankGone&) {
    // This rank failed (the scenario's failures): its algorithm ends here. As on the simulator, what it
    // recorded until then stays in the results; it drains in quiesce until the survivors have finished.
  } catch (const PeerFailed& e) {  // an algorithm that cannot go on without a failed peer: where and when it stops
    std::ostringstream what;
    what << "the run stopped at wall time " << comm.now_s() << " s: " << e.what();
    throw CommError(what.str());
  }
  const double end_s = comm.now_s();
  comm.quiesce();
  replicas.finish();  // after quiesce: a failed worker takes part only once the survivors have finished
  RankActivity activity = log.rank(rank);
  activity.idle_s = waits.blocked_s();
  activity.waited_on = waits.waited_on();
  RankReport mine{std::move(log), end_s, comm.messages_sent(), comm.bytes_sent(), comm.bytes_received(), activity};

  const std::vector<std::string> all = session.gather_on_root(report_to_json(mine).dump());
  if (rank != 0) return std::nullopt;
  std::vector<RankReport> reports;
  for (const auto& text : all) reports.push_back(report_from_json(nlohmann::json::parse(text)));
  auto [merged, outcome] = merge_reports(reports);
  progress->done(outcome.time_s);
  nlohmann::json s = summary(plan, outcome, merged);
  s["backend"] = "mpi";
  return PlanResult{plan.variant, std::move(merged), std::move(s)};
}

// Rank 0: DIR.partial-PID, renamed to DIR once every file is written.
void publish(const OutDir& out, const std::vector<Plan>& plans, const std::vector<PlanResult>& results) {
  namespace fs = std::filesystem;
  nlohmann::json versions = dtsim_versions();
  versions["mpi"] = mpi::MpiSession::library_version();
  PartialDir partial(out);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    Plan plan = plans[i];
    plan.resolved["backend"] = "mpi";
    const fs::path dir = results[i].subdir.empty() ? partial.path() : partial.path() / results[i].subdir;
    write_results(dir.string(), plan, {{"versions", versions}}, results[i].log, results[i].summary);
  }
  partial.publish();
  for (const PlanResult& r : results) {
    const fs::path dir = r.subdir.empty() ? out.path : out.path / r.subdir;
    std::cout << (r.subdir.empty() ? plans.front().experiment : r.subdir) << ": wall "
              << r.summary["wall_time_s"].get<double>() << " s";
    if (!r.summary["test_accuracy"].is_null())
      std::cout << ", test accuracy " << r.summary["test_accuracy"].get<double>();
    std::cout << "  -> " << shown(dir).string() << '\n';
  }
}

}  // namespace

int run_experiment_mpi(const RunOptions& opt) {
  if (opt.check_only) return check_experiment_mpi(opt);
  mpi::MpiSession session;
  const Rank rank = session.rank();
  const std::string who = "rank " + std::to_string(rank) + ": ";

  // 1. Every rank reads and checks the experiment, and the ranks agree on the outcome before anything runs:
  //    bad input ends every rank cleanly, with one message (from the lowest failing rank).
  std::vector<Plan> plans;
  OutDir out;  // rank 0's
  Fault fault;
  int code = 0;
  std::string message;
  try {
    plans = load_for_mpi(opt, session.size());
    if (rank == 0) out = check_out_dir(opt.out_dir, plans.front().experiment, opt.force);
    fault = read_fault(session.size());
  } catch (const InputError& e) {
    code = 2;
    message = std::string("input error: ") + e.what();
  } catch (const std::exception& e) {
    code = 1;
    message = std::string("error: ") + e.what();
  }
  const int worst = session.max_over_ranks(code);
  if (worst != 0) {
    if (session.min_over_ranks(code != 0 ? rank : INT_MAX) == rank) std::cerr << message << '\n';
    return worst;
  }

  // 2. The plans, one after another in this job. The rank boundary: a failure here ends the job.
  std::vector<PlanResult> results;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Plan& plan = plans[i];
    try {
      const std::string label = Progress::label(plan.variant.empty() ? plan.experiment : plan.variant, i, plans.size());
      auto r = run_plan_mpi(plan, session, fault, opt.hang_timeout_s, label);
      if (r) results.push_back(std::move(*r));
    } catch (const InputError& e) {
      mpi::MpiSession::abort_job(who + "input error: " + e.what(), 2);
    } catch (const std::exception& e) {
      mpi::MpiSession::abort_job(who + "error: " + e.what(), 1);
    }
  }

  // 3. Rank 0 publishes; every rank exits with its verdict.
  code = 0;
  if (rank == 0) {
    try {
      publish(out, plans, results);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << '\n';
      code = 1;
    }
  }
  return session.max_over_ranks(code);
}

}  // namespace dts::exp
