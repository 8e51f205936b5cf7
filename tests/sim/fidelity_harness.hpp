// Runs every collective of algorithms/collectives once on one platform at one fidelity, each in its own slot
// of simulated time (all members start it together, a straggler later), and reports each member's completion
// time per collective, its real-numerics results and its byte counters; compares two such runs.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/collective_sim.hpp"

namespace dts::test {

struct FidelityCase {
  std::string topology;  // star | fat_tree | dragonfly
  int workers = 4;
  bool straggler = false;                                  // member P / 2 + 1 (mod P) starts every collective 5 ms late
  std::size_t floats = 1'000'000;                          // modeled size of the timed collectives
  std::map<std::string, std::string> simgrid_config = {};  // extra --cfg items
  sim::RingSampling rings = {};                            // collective fidelity: flow budget 1 samples every ring
};

std::string describe(const FidelityCase& c);
// The platform file of the case (SimGrid XML, LV08 with its default factors), written under /tmp.
std::string platform_xml(const std::string& topology, int hosts);
// out["rank"][r] = {"t": {op: completion time from the slot's start}, "v": {op: result floats}, "sent", "recv"}.
nlohmann::json run_fidelity_case(const FidelityCase& c, sim::Fidelity fidelity);
// {op: max over members of |t_b - t_a| / t_a}.
nlohmann::json fidelity_errors(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace dts::test
