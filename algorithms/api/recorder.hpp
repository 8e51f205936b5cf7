// Where an algorithm reports progress: per-step loss rows and the models to evaluate. The backend stamps
// each row with its clock and the rank's byte counters; evaluation is an observer and costs no simulated
// time. One Recorder per rank.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/api/vec.hpp"

namespace dts {

class Recorder {
 public:
  virtual ~Recorder() = default;
  // After each local training step.
  virtual void step(std::int64_t step, float loss) = 0;
  // Whether the model at `step` (in steps of one worker) should be evaluated now.
  virtual bool eval_due(std::int64_t step) const = 0;
  // Evaluates `params` on the test set and records the accuracy at `step`. `final` marks the model the
  // run reports in summary.json.
  virtual void evaluate(std::int64_t step, ConstSlice params, bool final = false) = 0;
  // For algorithms whose workers hold different models (gossip, local SGD, EASGD): every training worker
  // calls it with its own replica at the same steps (those where eval_due, and the last). Once every worker
  // has observed a step, the backend records the test accuracy of the replicas' mean and their consensus
  // distance (README "Result directories"). An observer like evaluate: it costs no simulated time. A
  // recorder that records nothing ignores it.
  virtual void observe(std::int64_t step, ConstSlice params) {
    (void)step;
    (void)params;
  }

  // Added for the gossip family (issue 16).
  // The calling rank's own model at the end of a run whose final model is an aggregate of the workers' (the
  // Elastic Gossip thesis's rank-0 accuracy): evaluated and recorded beside the final model, never as it
  // (summary.json "rank0_test_accuracy" when rank 0 calls it).
  virtual void evaluate_own(std::int64_t step, ConstSlice params) { evaluate(step, params, false); }
  // A count the rank reports once, at its end (summary.json "counters", summed over the ranks).
  virtual void count(const std::string& name, std::int64_t value) {
    (void)name;
    (void)value;
  }

  // Added for MPCA's recovery (issue 18). Something the algorithm did that belongs on the run's time line (a
  // backup, a lost worker, a restart), stamped with the backend's clock and the rank, with its figures (seconds,
  // cycles, steps): summary.json "algorithm_events". A recorder that records nothing ignores it.
  virtual void event(const std::string& name, const std::vector<std::pair<std::string, double>>& fields) {
    (void)name;
    (void)fields;
  }
};

}  // namespace dts
