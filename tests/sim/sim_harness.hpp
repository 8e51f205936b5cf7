// Test harness for the SimGrid backend: runs a body on every rank of a small platform in an isolated child
// process (one SimGrid engine per process) and returns the JSON the bodies wrote.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

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
                        std::uint64_t seed = 42);

// Gives every rank of `job` a SimCompute of `setup` on its host's device and a recorder that keeps nothing, and
// quiets SimGrid's log. `setup` must outlive the run.
void use_sim_compute(sim::SimJob& job, const sim::ModelSetup& setup);

}  // namespace dts::test
