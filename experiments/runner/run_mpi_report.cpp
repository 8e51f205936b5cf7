// What one rank reports to rank 0 after a plan under --backend mpi, and the merge of every rank's report.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "experiments/runner/run_mpi.hpp"

namespace dts::exp {

nlohmann::json report_to_json(const RankReport& r) {
  auto row_json = [](const MetricsRow& row) {
    nlohmann::json j = {
        {"t", row.time_s}, {"r", row.rank}, {"s", row.step}, {"bs", row.bytes_sent}, {"br", row.bytes_received}};
    if (row.loss && std::isfinite(*row.loss)) j["loss"] = *row.loss;
    if (row.eval) j["eval"] = {row.eval->correct, row.eval->total, row.eval->mean_loss};
    if (row.aggregate) j["consensus"] = row.consensus_distance.value_or(0.0);
    return j;
  };
  nlohmann::json j = {{"end_s", r.end_s},
                      {"messages", r.messages},
                      {"bytes_sent", r.bytes_sent},
                      {"bytes_received", r.bytes_received},
                      {"rows", nlohmann::json::array()},
                      {"steps", r.activity.steps},
                      {"idle_s", r.activity.idle_s},
                      {"waited_on", nlohmann::json::array()}};
  for (const auto& [peer, s] : r.activity.waited_on) j["waited_on"].push_back({peer, s});
  const auto mark_json = [](const RankActivity::Mark& m) {
    return nlohmann::json{m.step, m.time_s, m.bytes_sent, m.bytes_received};
  };
  if (r.activity.window_from) j["window_from"] = mark_json(*r.activity.window_from);
  if (r.activity.last) j["last"] = mark_json(*r.activity.last);
  for (const auto& row : r.log.rows) j["rows"].push_back(row_json(row));
  if (r.log.final_eval) {
    j["final"] = row_json(*r.log.final_eval);
    j["hash"] = r.log.final_model_hash;
  }
  if (r.log.rank0_eval) {
    j["rank0"] = row_json(*r.log.rank0_eval);
    j["rank0_hash"] = r.log.rank0_model_hash;
  }
  if (!r.log.counters.empty()) j["counters"] = r.log.counters;
  if (!r.log.events.empty()) j["events"] = r.log.events;
  return j;
}

RankReport report_from_json(const nlohmann::json& j) {
  auto row_from = [](const nlohmann::json& x) {
    MetricsRow row;
    row.time_s = x.at("t").get<double>();
    row.rank = x.at("r").get<Rank>();
    row.step = x.at("s").get<std::int64_t>();
    row.bytes_sent = x.at("bs").get<std::uint64_t>();
    row.bytes_received = x.at("br").get<std::uint64_t>();
    if (x.contains("loss")) row.loss = x["loss"].get<float>();
    if (x.contains("eval")) {
      row.eval = model::EvalResult{x["eval"][0].get<std::int64_t>(), x["eval"][1].get<std::int64_t>(),
                                   x["eval"][2].get<double>()};
    }
    if (x.contains("consensus")) {
      row.aggregate = true;
      row.consensus_distance = x["consensus"].get<double>();
    }
    return row;
  };
  RankReport r;
  r.end_s = j.at("end_s").get<double>();
  r.messages = j.at("messages").get<std::uint64_t>();
  r.bytes_sent = j.at("bytes_sent").get<std::uint64_t>();
  r.bytes_received = j.at("bytes_received").get<std::uint64_t>();
  for (const auto& x : j.at("rows")) r.log.rows.push_back(row_from(x));
  r.activity.steps = j.at("steps").get<std::int64_t>();
  r.activity.idle_s = j.at("idle_s").get<double>();
  for (const auto& x : j.at("waited_on")) r.activity.waited_on[x.at(0).get<Rank>()] = x.at(1).get<double>();
  const auto mark_from = [](const nlohmann::json& x) {
    return RankActivity::Mark{x.at(0).get<std::int64_t>(), x.at(1).get<double>(), x.at(2).get<std::uint64_t>(),
                              x.at(3).get<std::uint64_t>()};
  };
  if (j.contains("window_from")) r.activity.window_from = mark_from(j["window_from"]);
  if (j.contains("last")) r.activity.last = mark_from(j["last"]);
  if (j.contains("final")) {
    r.log.final_eval = row_from(j["final"]);
    r.log.final_model_hash = j.at("hash").get<std::string>();
  }
  if (j.contains("rank0")) {
    r.log.rank0_eval = row_from(j["rank0"]);
    r.log.rank0_model_hash = j.at("rank0_hash").get<std::string>();
  }
  if (j.contains("counters")) r.log.counters = j["counters"].get<std::map<std::string, std::int64_t>>();
  if (j.contains("events")) r.log.events = j["events"].get<std::vector<nlohmann::json>>();
  return r;
}

std::pair<MetricsLog, RunOutcome> merge_reports(const std::vector<RankReport>& reports) {
  MetricsLog log;
  RunOutcome out;
  out.clock = log.clock = "wall";
  for (const RankReport& r : reports) {
    log.rows.insert(log.rows.end(), r.log.rows.begin(), r.log.rows.end());
    DTS_ASSERT(!(r.log.final_eval && log.final_eval), "two ranks evaluated a final model");
    if (r.log.final_eval) {
      log.final_eval = r.log.final_eval;
      log.final_model_hash = r.log.final_model_hash;
    }
    if (r.log.rank0_eval) {
      log.rank0_eval = r.log.rank0_eval;
      log.rank0_model_hash = r.log.rank0_model_hash;
    }
    for (const auto& [name, v] : r.log.counters) log.counters[name] += v;
    log.events.insert(log.events.end(), r.log.events.begin(), r.log.events.end());
    out.time_s = std::max(out.time_s, r.end_s);
    out.messages += r.messages;
    out.bytes_sent.push_back(r.bytes_sent);
    out.bytes_received.push_back(r.bytes_received);
    log.per_rank.push_back(r.activity);
  }
  std::stable_sort(log.rows.begin(), log.rows.end(), [](const MetricsRow& a, const MetricsRow& b) {
    return std::tie(a.time_s, a.rank, a.step) < std::tie(b.time_s, b.rank, b.step);
  });
  return {std::move(log), std::move(out)};
}

}  // namespace dts::exp
