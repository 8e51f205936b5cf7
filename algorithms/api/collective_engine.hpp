// An optional hook of the seam: a backend that runs a whole collective plan itself instead of as the
// point-to-point messages of algorithms/collectives/run_plan.cpp. The simulator's `collective` fidelity
// (DESIGN.md §3) provides one, which runs a plan as SimGrid flows; it is null on MPI and in `message`
// fidelity. Algorithms never call it: run_plan hands a plan to it when Comm::collective_engine() is not
// null, so one description of each collective serves both fidelities.
#pragma once

#include <memory>

#include "algorithms/api/collective_plan.hpp"
#include "algorithms/api/line_round.hpp"

namespace dts {

class CollectiveEngine {
 public:
  virtual ~CollectiveEngine() = default;
  // Blocks the calling member until its part of the plan is complete, as the message version would.
  // Results are bit for bit those of the message version.
  virtual void run(const PlanCall& call) = 0;
  // My part of a line round timed as a whole (line_round.hpp), in modeled numerics; null where the engine leaves
  // the round to its messages.
  virtual std::unique_ptr<LineRoundPart> line_round(const LineRoundSpec& /*spec*/) { return nullptr; }
};

}  // namespace dts
