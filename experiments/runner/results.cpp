// Result files and the training setup of a plan.
#include "experiments/runner/results.hpp"

#include <omp.h>

#include <algorithm>
#include <fstream>
#include <numeric>

#include "experiments/runner/scenario_events.hpp"

#ifndef DTS_GIT_SHA
#define DTS_GIT_SHA "unknown"
#endif
#ifndef DTS_VERSION
#define DTS_VERSION "0"
#endif

namespace fs = std::filesystem;

namespace dts::exp {

model::TrainerSetup trainer_setup(const Plan& plan) {
  model::TrainerSetup t;
  t.network = plan.model;
  t.backend = plan.backend == "ref" ? model::Backend::kRef : model::Backend::kOnednn;
  t.real = plan.real;
  t.train = &plan.data->train;
  t.batch = plan.batch;
  t.seed = plan.seed;
  t.optimizer = plan.optimizer;
  t.workers = plan.workers;
  t.first_worker_rank = plan.ranks - plan.workers;
  return t;
}

void write_json(const fs::path& path, const nlohmann::json& j) {
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

namespace {

// The steady state past a run's start-up (run.measure_from_step k): from the moment the last worker finished
// step k to the moment the last one finished its last step, and what each worker sent and received meanwhile.
// The tail after training (a final allreduce, a driver's last cycles, rounds still in flight) is not in it.
nlohmann::json window(const MetricsLog& log) {
  double from_s = 0, to_s = 0;
  std::int64_t from_step = -1, to_step = -1;
  nlohmann::json sent = nlohmann::json::object(), received = nlohmann::json::object();
  for (std::size_t r = 0; r < log.per_rank.size(); ++r) {
    const RankActivity& a = log.per_rank[r];
    if (!a.window_from || !a.last) continue;  // a server, or a worker that never reached the window
    from_s = std::max(from_s, a.window_from->time_s);
    to_s = std::max(to_s, a.last->time_s);
    from_step = a.window_from->step;
    to_step = to_step < 0 ? a.last->step : std::min(to_step, a.last->step);
    sent[std::to_string(r)] = a.last->bytes_sent - a.window_from->bytes_sent;
    received[std::to_string(r)] = a.last->bytes_received - a.window_from->bytes_received;
  }
  if (from_step < 0) return nullptr;  // no worker reached the window's first step
  const double steps = static_cast<double>(to_step - from_step);
  return {{"from_step", from_step},     {"to_step", to_step},
          {"time_s", to_s - from_s},    {"s_per_step", steps > 0 ? (to_s - from_s) / steps : 0.0},
          {"bytes_sent_by_rank", sent}, {"bytes_received_by_rank", received}};
}

}  // namespace

nlohmann::json summary(const Plan& plan, const RunOutcome& outcome, const MetricsLog& log) {
  nlohmann::json s;
  s["experiment"] = plan.experiment;
  if (!plan.variant.empty()) s["variant"] = plan.variant;
  s["algorithm"] = plan.algorithm;
  s["model"] = plan.model;
  s["numerics"] = plan.real ? "real" : "modeled";
  s["workers"] = plan.workers;
  s["ranks"] = plan.ranks;
  s["steps_per_worker"] = plan.steps;
  s[outcome.clock + "_time_s"] = outcome.time_s;
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
  if (log.rank0_eval) {  // the final model is an aggregate; rank 0's own beside it
    s["rank0_test_accuracy"] = log.rank0_eval->eval->accuracy();
    s["rank0_test_loss"] = log.rank0_eval->eval->mean_loss;
    s["rank0_model_hash"] = log.rank0_model_hash;
  }
  if (!log.counters.empty()) s["counters"] = log.counters;
  if (!log.events.empty()) {  // Recorder::event, in time order (ties: as recorded)
    std::vector<nlohmann::json> events = log.events;
    std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return a["at_s"].template get<double>() < b["at_s"].template get<double>();
    });
    s["algorithm_events"] = events;
  }
  // The last step every worker observed (Recorder::observe): their mean model and how far apart they are.
  const MetricsRow* last = nullptr;
  for (const MetricsRow& r : log.rows)
    if (r.aggregate && (!last || r.step >= last->step)) last = &r;
  if (last) {
    s["aggregate"] = {{"step", last->step},
                      {"test_accuracy", last->eval->accuracy()},
                      {"test_loss", last->eval->mean_loss},
                      {"consensus_distance", *last->consensus_distance}};
  }
  if (plan.measure_from_step > 0) s["window"] = window(log);
  s["scenario"] = scenario_events(*plan.scenario, outcome.time_s);
  return s;
}

nlohmann::json dtsim_versions() { return {{"dtsim", DTS_VERSION}, {"git", DTS_GIT_SHA}}; }

void write_results(const std::string& dir, const Plan& plan, const nlohmann::json& run, const MetricsLog& log,
                   const nlohmann::json& summary) {
  fs::create_directories(dir);
  nlohmann::json resolved = plan.resolved;
  resolved.update(run);
  // oneDNN splits its sums by thread: the same inputs give the same bits only with the same thread count.
  resolved["host"] = {{"omp_max_threads", omp_get_max_threads()}};
  write_json(fs::path(dir) / "config.resolved.json", resolved);
  log.write_csv((fs::path(dir) / "metrics.csv").string());
  log.write_rank_csvs((fs::path(dir) / "ranks.csv").string(), (fs::path(dir) / "waits.csv").string(), plan.ranks);
  write_json(fs::path(dir) / "summary.json", summary);
}

}  // namespace dts::exp
