// Test harness for the SimGrid backend: runs a body on every rank of a small platform in an isolated child
// process (one SimGrid engine per process) and returns the JSON the bodies wrote.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.hpp"
#include "sim/collective_sim.hpp"
#include "sim/launcher.hpp"
#include "sim/platform.hpp"
#include "sim/sim_comm.hpp"
#include "sim/sim_compute.hpp"

namespace dts::test {

// A star of `hosts` hosts with split-duplex links, LV08 with its correction factors pinned to 1 and no
// cross-traffic (the reverse ACK flow that takes 5 % of a busy reverse link), so that a
// message of S bytes between two hosts takes exactly 2 * latency + S / bandwidth.
sim::PlatformSpec pinned_star(int hosts, double bandwidth_bps, double latency_s);

// A SimGrid engine that logs only critical messages; one per process (tests run it in an isolated child).
std::unique_ptr<simgrid::s4u::Engine> quiet_engine();

using RankBody = std::function<void(sim::SimComm& comm, sim::SimNode& node, nlohmann::json& out)>;
// out["rank"][r] is rank r's output object; out["end_s"] the simulated end time, out["messages"] the
// messages sent, out["host"] what the simulation cost on this machine: "wall_s" (engine.run() alone) and
// "max_rss_kb"; drop it before comparing runs. `seed`: the experiment's, for the platform's message_noise.
nlohmann::json simulate(const sim::PlatformSpec& spec, int ranks, const RankBody& body,
                        sim::Fidelity fidelity = sim::Fidelity::kMessage, sim::RingSampling rings = {},
                        std::uint64_t seed = 42, sim::LineRoundTiming lines = {});

// Gives every rank of `job` a SimCompute of `setup` on its host's device and a recorder that keeps nothing, and
// quiets SimGrid's log. `setup` must outlive the run.
void use_sim_compute(sim::SimJob& job, const sim::ModelSetup& setup);

// Runs `body` as the main of `ranks` ranks on the platform object `platform` (read as "p.json"), each with a
// SimCompute of modeled LeNet (431,080 parameters, Mnist-shaped batches of `batch`, plain SGD), its
// forward-backward at `step_time_s` when given (the roofline's otherwise), in an isolated child; returns what
// the bodies wrote, out[rank].
using ContextBody = std::function<void(Context& ctx, nlohmann::json& out)>;
nlohmann::json run_lenet_ranks(const nlohmann::json& platform, int ranks, int batch, sim::Fidelity fidelity,
                               std::optional<double> step_time_s, const ContextBody& body);

}  // namespace dts::test
