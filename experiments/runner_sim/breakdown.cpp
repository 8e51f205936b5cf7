// summary.json "time_breakdown" and the end-of-run table.
#include "experiments/runner_sim/breakdown.hpp"

#include <cstdio>
#include <sstream>

namespace dts::exp {
namespace {

using sim::TimeCategory;
using sim::TimeVector;

nlohmann::json view(const TimeVector& v) {
  nlohmann::json j;
  nlohmann::json seconds = nlohmann::json::object();
  for (std::size_t i = 0; i < sim::kTimeCategories; ++i) seconds[sim::to_string(static_cast<TimeCategory>(i))] = v[i];
  j["seconds"] = seconds;
  const double total = sim::total_s(v), comm = sim::communication_s(v);
  j["total_s"] = total;
  j["communication_s"] = comm;
  j["communication_ratio"] = total > 0 ? comm / total : 0.0;
  return j;
}

}  // namespace

Rank master_rank(const Plan& plan) {
  const nlohmann::json& a = plan.resolved.at("algorithm");
  if (plan.algorithm == "easgd_sync" && a.value("variant", 3) != 1) return 1;
  if (plan.algorithm == "sync_sgd" && a.value("master", std::string("host")) == "worker") return 1;
  return plan.ranks > plan.workers ? 0 : -1;
}

nlohmann::json time_breakdown(const std::vector<sim::ActorTimes>& actors, int ranks, int workers, Rank master,
                              double end_s) {
  std::vector<const sim::ActorTimes*> main(static_cast<std::size_t>(ranks), nullptr);
  for (const auto& a : actors) {
    if (a.main && a.rank >= 0 && a.rank < ranks) main[static_cast<std::size_t>(a.rank)] = &a;
  }
  nlohmann::json out;
  // Run: the path of the rank that ends last, idle up to the end of the simulation (trailing flows).
  const sim::ActorTimes* last = nullptr;
  for (const auto* a : main) {
    if (a != nullptr && (last == nullptr || a->end_s > last->end_s)) last = a;
  }
  TimeVector run{};
  if (last != nullptr) run = last->path;
  run[static_cast<std::size_t>(TimeCategory::kIdle)] += std::max(0.0, end_s - sim::total_s(run));
  out["run"] = view(run);
  out["run"]["critical_rank"] = last != nullptr ? last->rank : -1;
  if (master >= 0 && master < ranks && main[static_cast<std::size_t>(master)] != nullptr) {
    out["master"] = view(main[static_cast<std::size_t>(master)]->own);
    out["master"]["rank"] = master;
  } else {
    out["master"] = nullptr;
  }
  TimeVector mean{};
  int counted = 0;
  for (Rank r = ranks - workers; r < ranks; ++r) {
    const auto* a = main[static_cast<std::size_t>(r)];
    if (a == nullptr) continue;
    for (std::size_t i = 0; i < sim::kTimeCategories; ++i) mean[i] += a->own[i];
    ++counted;
  }
  for (auto& x : mean) x = counted > 0 ? x / counted : 0.0;
  out["workers"] = view(mean);
  out["ranks"] = nlohmann::json::array();
  for (Rank r = 0; r < ranks; ++r) {
    const auto* a = main[static_cast<std::size_t>(r)];
    nlohmann::json v = view(a != nullptr ? a->own : TimeVector{});
    v["rank"] = r;
    v["elapsed_s"] = a != nullptr ? a->end_s - a->start_s : 0.0;
    out["ranks"].push_back(v);
  }
  return out;
}

std::string breakdown_table(const std::vector<std::pair<std::string, nlohmann::json>>& results) {
  static const char* kShort[] = {"gpu-gpu", "data", "cpu-gpu", "network", "f/b", "gpu upd", "cpu upd", "idle"};
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof line, "%-22s %10s", "time breakdown (s)", "total");
  os << line;
  for (const char* c : kShort) {
    std::snprintf(line, sizeof line, " %9s", c);
    os << line;
  }
  os << "  comm ratio\n";
  for (const auto& [label, summary] : results) {
    if (!summary.contains("time_breakdown")) continue;
    const nlohmann::json& run = summary["time_breakdown"]["run"];
    std::snprintf(line, sizeof line, "%-22s %10.4f", label.substr(0, 22).c_str(), run["total_s"].get<double>());
    os << line;
    for (std::size_t i = 0; i < sim::kTimeCategories; ++i) {
      std::snprintf(line, sizeof line, " %9.4f",
                    run["seconds"][sim::to_string(static_cast<TimeCategory>(i))].get<double>());
      os << line;
    }
    std::snprintf(line, sizeof line, "  %9.1f %%\n", 100 * run["communication_ratio"].get<double>());
    os << line;
  }
  return os.str();
}

}  // namespace dts::exp
