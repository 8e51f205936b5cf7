// Runs one simulated training: builds the platform, starts one actor per rank running the algorithm
// against SimComm/SimCompute, and runs SimGrid to the end. One simulation per process: SimGrid allows
// a single Engine per process, so callers that run several (variants, tests) fork first.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/api/scenario.hpp"
#include "sim/actor_stack.hpp"
#include "sim/collective_sim.hpp"
#include "sim/platform.hpp"
#include "sim/time_account.hpp"
#include "sim/wire.hpp"

namespace dts::sim {

struct SimJob {
  PlatformSpec platform;
  int ranks = 1;
  int workers = 1;
  std::int64_t steps = 1;
  std::uint64_t seed = 42;                 // the experiment's: draws the platform's message_noise
  Fidelity fidelity = Fidelity::kMessage;  // how collectives are simulated (sim/collective_sim.hpp)
  RingSampling rings;                      // collective fidelity: how ring collectives are timed
  LineRoundTiming lines;                   // collective fidelity: how BIDMach's line rounds are timed
  RankMain main;
  // One Compute per rank, created inside the rank's actor (SimCompute for training, a test problem in tests),
  // given the simulation's time account and its wires (for minibatch copies).
  std::function<std::unique_ptr<Compute>(Rank, simgrid::s4u::Host*, TimeAccount*, Wires&)> make_compute;
  // One recorder per rank; called inside the rank's actor.
  std::function<std::unique_ptr<Recorder>(Comm&)> make_recorder;
  std::vector<std::string> simgrid_args;  // extra --cfg=... / --log=... passed to the Engine
  // Failures and link changes played by the simulation; stragglers and jitter are the Computes' (SimCompute's).
  Scenario scenario;
  // Receives the time account's stretches and messages (a timeline); null: none.
  SpanSink* spans = nullptr;
  // Each rank actor's stack (sim/actor_stack.hpp): exp::sim_job gives modeled numerics kModeledRankStackKiB.
  unsigned rank_stack_kib = kRankStackKiB;
};

struct SimOutcome {
  double simulated_time_s = 0;
  std::uint64_t messages = 0;
  std::vector<std::uint64_t> bytes_sent, bytes_received;  // per rank, modeled
  std::vector<ActorTimes> actor_times;                    // where the time went (sim/time_account.hpp)
  std::vector<std::map<Rank, double>> waited_on;          // per rank: its blocked time by peer (WaitLog)
};

SimOutcome run_simulation(const SimJob& job);

// Raises the soft limit of the main stack to 512 MiB (at most the hard limit); run_simulation calls it first.
// SimGrid 3.32's solver walks a connected set of flows and links by recursion on the main stack
// (System::update_modified_cnst_set_rec): a ring of 65,536 workers overflowed the default 8 MiB.
void raise_stack_limit();

// The Engine's command line: "dtsim", sim/'s own settings, then `simgrid_args` (--cfg=... / --log=...).
std::vector<std::string> engine_args(const std::vector<std::string>& simgrid_args);

}  // namespace dts::sim

namespace dts::sim {
// "3.32.0": for config.resolved.json.
std::string simgrid_version();
}  // namespace dts::sim
