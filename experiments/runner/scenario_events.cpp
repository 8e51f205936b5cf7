// The scenario events that fired, for summary.json.
#include "experiments/runner/scenario_events.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace dts::exp {

nlohmann::json scenario_events(const Scenario& scenario, double end_s) {
  std::vector<std::pair<double, nlohmann::json>> events;
  auto fired = [&](double at_s, const char* event, nlohmann::json what) {
    if (at_s > end_s) return;
    what["at_s"] = at_s;
    what["event"] = event;
    events.emplace_back(at_s, std::move(what));
  };
  for (const Straggler& s : scenario.stragglers) {
    const nlohmann::json what = {{"ranks", s.ranks}, {"factor", s.factor}};
    fired(s.from_s, "straggler_begin", what);
    if (s.until_s != kNever) fired(s.until_s, "straggler_end", what);
  }
  for (const LinkChange& c : scenario.links) {
    nlohmann::json what;
    if (!c.down) what = {{"bandwidth_factor", c.bandwidth_factor}, {"latency_factor", c.latency_factor}};
    if (!c.links.empty()) what["links"] = c.links;
    if (!c.nic_of.empty()) what["nic_of"] = c.nic_of;
    fired(c.from_s, c.down ? "link_down" : "link_change", what);
    if (c.until_s != kNever) fired(c.until_s, c.down ? "link_up" : "link_restore", what);
  }
  for (const RankEvent& f : scenario.failures) fired(f.at_s, "failure", {{"rank", f.rank}});
  for (const Restart& f : scenario.restarts) {
    fired(f.at_s, "failure", {{"rank", f.rank}, {"restart_after_s", f.restart_after_s}});
  }
  for (const RankEvent& j : scenario.joins) fired(j.at_s, "join", {{"rank", j.rank}});
  for (const RankEvent& l : scenario.leaves) fired(l.at_s, "leave", {{"rank", l.rank}});
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::json out = {{"events", nlohmann::json::array()}};
  for (auto& [at, e] : events) out["events"].push_back(std::move(e));
  return out;
}

}  // namespace dts::exp
