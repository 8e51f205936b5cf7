// Where an algorithm reports progress: per-step loss rows and the models to evaluate. The backend stamps
// each row with its clock and the rank's byte counters; evaluation is an observer and costs no simulated
// time. One Recorder per rank.
#pragma once

#include <cstdint>

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
};

}  // namespace dts
