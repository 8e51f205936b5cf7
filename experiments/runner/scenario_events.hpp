// summary.json "scenario": the events of the plan's scenario (algorithms/api/scenario.hpp) that fired before
// the run ended, in time order: a straggler window beginning and ending, a link change (at 0: they last the
// whole run), a failure, a join, a leave. Times are the scenario's own, on the run's clock (simulated, or wall on MPI);
// an event after the run's end did not fire and is left out, as is jitter (no event: it acts on every step).
#pragma once

#include <nlohmann/json.hpp>

#include "algorithms/api/scenario.hpp"

namespace dts::exp {

// {"events": [{"at_s", "event", and what it acts on}, ...]}; events at the same time in the scenario's order.
nlohmann::json scenario_events(const Scenario& scenario, double end_s);

}  // namespace dts::exp
