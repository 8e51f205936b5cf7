// simulate(): an Engine, the platform, a SimWorld and one actor per rank, in a forked child.
#include "tests/sim/sim_harness.hpp"

#include "tests/support/null_recorder.hpp"

#include <sys/resource.h>

#include <chrono>

#include <simgrid/s4u.hpp>

#include "sim/message_costs.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::test {

std::unique_ptr<sg4::Engine> quiet_engine() {
  int argc = 2;
  char arg0[] = "test", arg1[] = "--log=root.thres:critical";
  char* argv[] = {arg0, arg1, nullptr};
  return std::make_unique<sg4::Engine>(&argc, argv);
}

sim::PlatformSpec pinned_star(int hosts, double bandwidth_bps, double latency_s) {
  sim::PlatformSpec p;
  p.name = "test_star";
  p.hosts = hosts;
  p.link_bandwidth_bps = bandwidth_bps;
  p.link_latency_s = latency_s;
  p.network_model = "LV08";
  p.simgrid_config = {
      {"network/latency-factor", "1"}, {"network/bandwidth-factor", "1"}, {"network/crosstraffic", "0"}};
  p.device.peak_flops = 1e9;
  return p;
}

nlohmann::json simulate(const sim::PlatformSpec& spec, int ranks, const RankBody& body, sim::Fidelity fidelity,
                        sim::RingSampling rings, std::uint64_t seed, sim::LineRoundTiming lines) {
  return run_isolated([&] {
    const auto engine = quiet_engine();
    const auto hosts = sim::build_platform(spec, ranks);
    sim::MessageCosts costs(spec, seed);
    sim::SimWorld world(hosts, nullptr, costs.active() ? &costs : nullptr);
    std::unique_ptr<sim::CollectiveSim> collectives;
    if (fidelity == sim::Fidelity::kCollective) collectives = std::make_unique<sim::CollectiveSim>(world, rings, lines);
    nlohmann::json out;
    out["rank"] = nlohmann::json::array();
    for (int r = 0; r < ranks; ++r) out["rank"].push_back(nlohmann::json::object());
    for (int r = 0; r < ranks; ++r) {
      sg4::Actor::create("rank-" + std::to_string(r), hosts[static_cast<std::size_t>(r)], [&, r] {
        sim::SimComm comm(world, r, collectives.get());
        sim::SimNode node(hosts[static_cast<std::size_t>(r)]);
        body(comm, node, out["rank"][static_cast<std::size_t>(r)]);
      });
    }
    const auto t0 = std::chrono::steady_clock::now();
    engine->run();
    out["host"]["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    out["host"]["max_rss_kb"] = usage.ru_maxrss;
    out["end_s"] = sg4::Engine::get_clock();
    out["messages"] = world.messages_sent();
    return out;
  });
}

void use_sim_compute(sim::SimJob& job, const sim::ModelSetup& setup) {
  job.make_compute = [&setup, &job](Rank r, simgrid::s4u::Host* host, sim::TimeAccount* account,
                                    sim::Wires& wires) -> std::unique_ptr<Compute> {
    return std::make_unique<sim::SimCompute>(setup, r, job.platform, host, account, wires);
  };
  job.make_recorder = [](Comm&) -> std::unique_ptr<Recorder> { return std::make_unique<NullRecorder>(); };
  job.simgrid_args = {"--log=root.thres:critical"};
}

nlohmann::json run_lenet_ranks(const nlohmann::json& platform, int ranks, int batch, sim::Fidelity fidelity,
                               std::optional<double> step_time_s, const ContextBody& body) {
  return run_isolated([&] {
    data::Dataset mnist{"mnist", 60000, 1, 28, 28, 10, {}, {}};
    sim::ModelSetup setup;
    setup.trainer.network = "lenet";
    setup.trainer.real = false;
    setup.trainer.train = &mnist;
    setup.trainer.batch = batch;
    setup.trainer.workers = ranks;
    setup.step_time_s = step_time_s;
    sim::SimJob job;
    job.platform = sim::read_platform(platform, "p.json", "", ".");
    job.ranks = job.workers = ranks;
    job.fidelity = fidelity;
    nlohmann::json out = nlohmann::json::array();
    for (int r = 0; r < ranks; ++r) out.push_back(nlohmann::json::object());
    job.main = [&](Context& ctx) { body(ctx, out[static_cast<std::size_t>(ctx.comm.rank())]); };
    use_sim_compute(job, setup);
    sim::run_simulation(job);
    return out;
  });
}

}  // namespace dts::test
