// The simulator's reading of an experiment, and its pre-run check.
#include "experiments/runner_sim/sim_input.hpp"

#include <iostream>
#include <set>

#include "core/errors.hpp"
#include "sim/message_costs.hpp"
#include "sim/preflight.hpp"

namespace dts::exp {
namespace {

SimInput& as_sim(SimulatorPart& part) { return dynamic_cast<SimInput&>(part); }

class SimReader final : public SimulatorReader {
 public:
  std::shared_ptr<SimulatorPart> read_platform_file(const std::string& platform_file) const override {
    auto in = std::make_shared<SimInput>();
    in->platform = sim::load_platform_file(platform_file);
    return in;
  }
  std::shared_ptr<SimulatorPart> read_platform(const nlohmann::json& section, const std::string& file,
                                               const std::string& base_dir) const override {
    auto in = std::make_shared<SimInput>();
    in->platform = sim::read_platform(section, file, "/platform", base_dir);
    return in;
  }
  void check_capacity(const SimulatorPart& part, double weight_bytes, double data_bytes) const override {
    sim::check_partition_capacity(dynamic_cast<const SimInput&>(part).platform, weight_bytes, data_bytes);
  }
  void read_run(ConfigReader& r, SimulatorPart& part) const override {
    SimInput& in = as_sim(part);
    in.fidelity = r.choice("fidelity", "message", {"message", "collective"}) == "message" ? sim::Fidelity::kMessage
                                                                                          : sim::Fidelity::kCollective;
    in.rings.flow_budget = static_cast<int>(r.integer("ring_flow_budget", sim::RingSampling::kFlowBudget, 1, 1 << 30));
    in.rings.sample_steps = static_cast<int>(r.integer("ring_sample_steps", 1, 1, 1 << 30));
    const sim::LineRoundTiming lines;
    in.lines.message_budget = static_cast<std::uint64_t>(
        r.integer("line_round_budget", static_cast<std::int64_t>(lines.message_budget), 0, 1LL << 40));
    in.lines.groups =
        static_cast<std::size_t>(r.integer("line_round_groups", static_cast<std::int64_t>(lines.groups), 1, 1 << 20));
    in.lines.nic = r.choice("line_round_timing", "flows", {"flows", "nic"}) == "nic";
    in.trace = r.choice("trace", "none", {"none", "chrome", "paje"});
  }
};

}  // namespace

const SimulatorReader& sim_reader() {
  static const SimReader reader;
  return reader;
}

const SimInput& sim_input(const Plan& plan) {
  const auto* in = dynamic_cast<const SimInput*>(plan.simulator.get());
  DTS_ASSERT(in != nullptr, "a plan for the simulator read without sim_reader()");
  return *in;
}

namespace {

// BIDMach's line rounds at the collective fidelity (README, "BIDMach's line rounds"): what `nic` cannot time, and a
// warning where SimGrid's solver would take long over the flows, from a grid of 64 x 64 on.
void check_line_rounds(const Plan& p, const SimInput& in) {
  if (in.fidelity != sim::Fidelity::kCollective) return;
  if (in.lines.nic && p.scenario->has_link_windows()) {
    throw InputError(p.scenario->where + "/links",
                     "a link window needs run.line_round_timing \"flows\": \"nic\" times a line round's "
                     "flows from the links as they are at the start");
  }
  if (in.lines.nic && in.platform.sharing != "split_duplex") {
    throw InputError(in.platform.origin + "/sharing",
                     "run.line_round_timing \"nic\" takes every NIC for two links, one each way (\"split_duplex\"), "
                     "not \"" +
                         in.platform.sharing + "\"");
  }
  constexpr int kManyGridWorkers = 4096;
  if (!in.lines.nic && !p.real && p.algorithm == "bidmach_grid" && p.workers >= kManyGridWorkers) {
    std::cerr << "warning: " << p.workers << " workers of bidmach_grid: its line rounds run as flows that SimGrid's "
              << "solver shares (run.line_round_timing \"flows\"), at a cost that grows with the square of the "
              << "workers (16,384: 5 minutes for 3 steps); \"nic\" shares them at their members' NICs, 10 times "
              << "faster at that size, within 6 % of the flows' round time up to 4,096 workers (README)\n";
  }
}

}  // namespace

void check_simulation(const std::vector<Plan>& plans, const std::vector<std::string>& simgrid_args) {
  sim::check_simgrid_args(simgrid_args);
  std::set<std::string> checked;  // variants often share their platform
  for (const Plan& p : plans) {
    const SimInput& in = sim_input(p);
    if (in.fidelity == sim::Fidelity::kCollective && !p.scenario->failures.empty()) {
      throw InputError(p.scenario->where + "/failures",
                       "failures need run.fidelity \"message\": the collective fidelity has no messages to lose");
    }
    sim::check_message_costs_fidelity(in.platform, in.fidelity == sim::Fidelity::kCollective);
    check_line_rounds(p, in);
    const int ring_steps = 2 * (p.ranks - 1);  // an allreduce's
    if (in.fidelity == sim::Fidelity::kCollective && in.rings.sampled(p.ranks, ring_steps) &&
        p.scenario->has_link_windows()) {
      std::cerr << "warning: " << p.scenario->where << "/links: with a link window the collective fidelity runs every"
                << " step of a ring as flows, " << static_cast<long>(p.ranks) * ring_steps << " per allreduce of "
                << p.ranks << " ranks, above run.ring_flow_budget (" << in.rings.flow_budget
                << "): slow at this size\n";
    }
    const std::string key = in.platform.resolved.dump() + " " + std::to_string(p.ranks) + " " +
                            std::to_string(p.workers) + " " + p.resolved.value("scenario", nlohmann::json()).dump();
    if (checked.insert(key).second) sim::check_platform(in.platform, p.ranks, p.workers, simgrid_args, *p.scenario);
  }
}

}  // namespace dts::exp
