// What a run records: per-rank step rows and evaluation rows (metrics.csv), the final evaluated model
// (summary.json), and a progress line on stderr for people watching long runs. Only simulated quantities
// go into the files, so that two runs of the same experiment write identical bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/recorder.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/model/network.hpp"

namespace dts::exp {

struct MetricsRow {
  double time_s = 0;
  Rank rank = 0;
  std::int64_t step = 0;
  std::optional<float> loss;
  std::optional<model::EvalResult> eval;
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  // The replicas' row of an observed step (replicas.hpp): rank -1, eval of their mean, their distance.
  bool aggregate = false;
  std::optional<double> consensus_distance;
  // One worker's own replica, evaluated at an observed step (run.eval_replicas): kind "replica".
  bool replica = false;
};

class ReplicaObserver;  // replicas.hpp

// One rank's share of a run (ranks.csv, waits.csv): the training steps it completed, its idle time (the
// simulator's time account: its own time waiting on peers, locks and joins, wire time excluded; MPI: the
// time its activities spent blocked in waits), and its blocked time by the peer that ended each wait
// (algorithms/api/wait_log.hpp).
struct RankActivity {
  std::int64_t steps = 0;
  double idle_s = 0;
  std::map<Rank, double> waited_on;
  // Where the rank stood at the start of the measurement window (Cadence::measure_from_step) and after its last
  // step: the clock and its byte counters.
  struct Mark {
    std::int64_t step = 0;
    double time_s = 0;
    std::uint64_t bytes_sent = 0, bytes_received = 0;
  };
  std::optional<Mark> window_from, last;
};

// Test-set evaluation, shared by every rank of the process.
class Evaluator {
 public:
  Evaluator(const std::string& network, model::Backend backend, const data::Dataset& test);
  model::EvalResult evaluate(ConstSlice params);

 private:
  std::unique_ptr<model::Network> net_;
  const data::Dataset& test_;
};

// The progress line of both backends on stderr, at most once a second on a terminal, every 10 s otherwise:
//   [easgd_async, 2 of 3] step 120/468  simulated 61.2 s  loss 0.5127  test acc 0.8134  wall 14 s, ETA 41 s
// ("wall" instead of "simulated" on MPI). The ETA assumes the remaining steps go as fast as the ones so far.
// A wall-clock duration for people: "14 s", "3.2 min", "1.5 h".
std::string duration(double s);

class Progress {
 public:
  // `clock`: what now_s measures, "simulated" or "wall".
  Progress(std::string label, std::int64_t total_steps, std::string clock = "simulated");
  // "name" alone, or "name, k of n" when a run has several plans (index from 0).
  static std::string label(const std::string& name, std::size_t index, std::size_t count);
  void step(std::int64_t step, double now_s, std::optional<float> loss);
  void eval(double accuracy);
  void done(double now_s);

 private:
  void print(bool final);
  std::string label_, clock_;
  std::int64_t total_ = 0, step_ = 0;
  double now_s_ = 0;
  std::optional<float> loss_;
  std::optional<double> acc_;
  std::chrono::steady_clock::time_point start_, last_;
  bool tty_;
};

class MetricsLog {
 public:
  std::vector<MetricsRow> rows;
  std::optional<MetricsRow> final_eval;
  std::string final_model_hash;  // FNV-1a 64 of the final evaluated parameters' bytes, hex
  // Rank 0's own model at the end when the final model is an aggregate (Recorder::evaluate_own), and its hash.
  std::optional<MetricsRow> rank0_eval;
  std::string rank0_model_hash;
  std::map<std::string, std::int64_t> counters;  // Recorder::count, summed over the ranks
  // Recorder::event: {"at_s", "rank", "event", and its figures}, in the order recorded (summary.json sorts them).
  std::vector<nlohmann::json> events;
  std::string clock = "simulated";  // what time_s measures: "simulated" (sim/) or "wall" (realexec/)
  // By rank (grown as ranks record): steps counted by MetricsRecorder, idle_s and waited_on filled in by the
  // runner after the run.
  std::vector<RankActivity> per_rank;
  // time_s,rank,step,loss,test_accuracy,test_loss,bytes_sent,bytes_received,kind,clock,consensus_distance;
  // empty cells where not measured; kind is "train" (a step's loss), "eval" (a test-set evaluation),
  // "replica" (a worker's own replica, evaluated) or "aggregate" (the workers' mean model and their consensus
  // distance, no rank and no bytes).
  void write_csv(const std::string& path) const;
  // ranks.csv: rank,steps,idle_s,waited_s (waited_s: the sum of the rank's waits.csv rows), one row per rank of
  // a run of `ranks`; waits.csv: rank,peer,waited_s, the peers each rank waited on, in rank order.
  void write_rank_csvs(const std::string& ranks_path, const std::string& waits_path, int ranks) const;
  RankActivity& rank(Rank r);  // per_rank[r], grown to hold it
};

// What a run records, and how often (the experiment's run section).
struct Cadence {
  std::int64_t eval_every_steps = 0, log_every_steps = 1;
  bool eval_replicas = false;          // every observed replica is evaluated too (kind "replica")
  std::int64_t measure_from_step = 0;  // > 0: each rank's clock and bytes at this step open summary.json's window
};

class MetricsRecorder final : public Recorder {
 public:
  MetricsRecorder(Comm& comm, MetricsLog& log, Evaluator* evaluator, Progress* progress, const Cadence& cadence,
                  ReplicaObserver* replicas = nullptr);
  void step(std::int64_t step, float loss) override;
  bool eval_due(std::int64_t step) const override;
  void evaluate(std::int64_t step, ConstSlice params, bool final) override;
  void evaluate_own(std::int64_t step, ConstSlice params) override;
  void count(const std::string& name, std::int64_t value) override;
  void event(const std::string& name, const std::vector<std::pair<std::string, double>>& fields) override;
  void observe(std::int64_t step, ConstSlice params) override;

 private:
  MetricsRow row(std::int64_t step) const;
  Comm& comm_;
  MetricsLog& log_;
  Evaluator* evaluator_;
  Progress* progress_;
  Cadence cadence_;
  ReplicaObserver* replicas_;  // null: observations are not recorded
};

}  // namespace dts::exp
