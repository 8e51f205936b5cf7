// The replicas' view of a run (Recorder::observe): at a step that every worker has observed, the mean of the
// workers' models, its test accuracy, and the consensus distance, sqrt((1/P) sum_i |w_i - mean|^2), the root
// mean square distance of a replica from the mean. Backends collect the sum of the replicas and the sum of
// their squared norms, since sum_i |w_i - mean|^2 = sum_i |w_i|^2 - P |mean|^2; in doubles, so that the
// difference keeps the distance of replicas that nearly agree.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "algorithms/api/vec.hpp"
#include "experiments/runner/metrics.hpp"

namespace dts::exp {

// Sum of P replicas: [sum_i w_i..., sum_i |w_i|^2] (params.count + 1 doubles).
struct ReplicaSum {
  std::vector<double> sum;  // the vector part, then the squared norms as the last element
  int count = 0;            // replicas added
  double last_time_s = 0;   // the clock of the last one added
  void add(ConstSlice params, double time_s);
  std::vector<float> mean() const;
  double consensus_distance() const;
};

// The row of an observed step: kind "aggregate", the mean's evaluation and the consensus distance.
MetricsRow aggregate_row(std::int64_t step, const ReplicaSum& sum, Evaluator& evaluator);

// Where a recorder hands its rank's observations (one per process, shared by the ranks that run there).
class ReplicaObserver {
 public:
  virtual ~ReplicaObserver() = default;
  virtual void observe(std::int64_t step, ConstSlice params, double time_s) = 0;
};

// Every worker in this process (the simulator): sums the replicas of each step as they arrive and records
// the row when the last of `workers` arrives, into `log`.
class InProcessReplicas final : public ReplicaObserver {
 public:
  InProcessReplicas(int workers, Evaluator& evaluator, MetricsLog& log)
      : workers_(workers), evaluator_(evaluator), log_(log) {}
  void observe(std::int64_t step, ConstSlice params, double time_s) override;

 private:
  int workers_;
  Evaluator& evaluator_;
  MetricsLog& log_;
  std::map<std::int64_t, ReplicaSum> open_;  // steps not yet observed by every worker
};

}  // namespace dts::exp
