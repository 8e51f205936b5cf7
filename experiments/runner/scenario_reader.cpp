// The scenario section, read strictly.
#include "experiments/runner/scenario_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/json_input.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

constexpr double kMaxTime = 1e12;  // seconds of simulated or wall time

// An array of objects, each read by `read_one`.
void each(ConfigReader& r, const std::string& key, const std::function<void(ConfigReader&)>& read_one) {
  nlohmann::json out = nlohmann::json::array();
  for (ConfigReader& item : r.items(key)) {
    read_one(item);
    item.finish();
    out.push_back(item.resolved());
  }
  if (r.has(key)) r.resolved()[key] = out;
}

Rank read_rank(ConfigReader& r, const std::string& key, const ScenarioShape& shape) {
  return static_cast<Rank>(r.integer(key, 0, 0, shape.ranks - 1));
}

// "ranks": [r, ...] | "all" | "workers", or "fraction": f of the workers (drawn from the seed).
std::vector<Rank> read_targets(ConfigReader& r, const ScenarioShape& shape, std::uint64_t seed, bool fraction_ok) {
  const bool by_ranks = r.has("ranks"), by_fraction = fraction_ok && r.has("fraction");
  if (by_ranks == by_fraction)
    r.fail("ranks", fraction_ok ? "give exactly one of ranks and fraction" : "required key is missing");
  std::vector<Rank> ranks;
  const Rank first_worker = shape.ranks - shape.workers;
  if (by_fraction) {
    const double f = r.number("fraction", 0, 0, 1);
    ranks = draw_ranks(f, shape.workers, first_worker, seed);
  } else {
    const nlohmann::json& v = r.raw("ranks");
    if (v == "all" || v == "workers") {
      for (Rank k = v == "all" ? 0 : first_worker; k < shape.ranks; ++k) ranks.push_back(k);
    } else if (v.is_array() && !v.empty()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string where = "ranks/" + std::to_string(i);
        if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0 || v[i].get<std::int64_t>() >= shape.ranks) {
          r.fail(where,
                 "expected a rank of this run, 0 to " + std::to_string(shape.ranks - 1) + ", got " + echo_json(v[i]));
        }
        const auto k = static_cast<Rank>(v[i].get<std::int64_t>());
        if (std::find(ranks.begin(), ranks.end(), k) != ranks.end()) r.fail(where, "rank named twice");
        ranks.push_back(k);
      }
      std::sort(ranks.begin(), ranks.end());
    } else {
      r.fail("ranks", "expected a non-empty array of ranks, \"all\" or \"workers\", got " + echo_json(v));
    }
  }
  r.resolved()["resolved_ranks"] = ranks;
  return ranks;
}

void read_window(ConfigReader& r, double& from_s, double& until_s) {
  from_s = r.number("from_s", 0, 0, kMaxTime);
  if (r.has("until_s")) {
    until_s = r.number("until_s", 0, 0, kMaxTime);
    if (until_s <= from_s) r.fail("until_s", "must be later than from_s");
  }
}

void read_events(ConfigReader& r, const std::string& key, const ScenarioShape& shape, std::vector<RankEvent>& out) {
  each(r, key, [&](ConfigReader& e) {
    out.push_back({read_rank(e, "rank", shape), e.number("at_s", 0, 0, kMaxTime)});
  });
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (out[i].rank == out[j].rank) r.fail(key + "/" + std::to_string(i) + "/rank", "rank named twice");
    }
  }
}

Scenario read_body(ConfigReader& r, const ScenarioShape& shape) {
  Scenario s;
  s.seed =
      static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(shape.seed), 0, std::int64_t{1} << 53));
  r.string("name", "");
  r.string("description", "");
  each(r, "stragglers", [&](ConfigReader& e) {
    Straggler x;
    x.ranks = read_targets(e, shape, s.seed, true);
    x.factor = e.require_number("factor", 1e-3, 1e6);
    read_window(e, x.from_s, x.until_s);
    s.stragglers.push_back(std::move(x));
  });
  each(r, "jitter", [&](ConfigReader& e) {
    Jitter x;
    x.ranks = read_targets(e, shape, s.seed, true);
    const std::string model = e.choice("model", "lognormal", {"lognormal", "two_point"});
    if (model == "lognormal") {
      x.sigma = e.require_number("sigma", 0, 5);
    } else {
      x.model = Jitter::Model::kTwoPoint;
      x.probability = e.require_number("probability", 0, 1);
      x.factor = e.require_number("factor", 1e-3, 1e6);
    }
    s.jitter.push_back(std::move(x));
  });
  each(r, "links", [&](ConfigReader& e) {
    LinkChange x;
    if (e.has("links") == e.has("nic_of")) e.fail("links", "give exactly one of links (names) and nic_of (ranks)");
    if (e.has("links")) {
      const nlohmann::json& v = e.raw("links");
      if (!v.is_array() || v.empty()) e.fail("links", "expected a non-empty array of link names");
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string() || v[i].get<std::string>().empty())
          e.fail("links/" + std::to_string(i), "expected a link name");
        x.links.push_back(v[i].get<std::string>());
      }
      e.resolved()["links"] = x.links;
    } else {
      const nlohmann::json& v = e.raw("nic_of");
      if (!v.is_array() || v.empty()) e.fail("nic_of", "expected a non-empty array of ranks");
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number_integer() || v[i].get<std::int64_t>() < 0 || v[i].get<std::int64_t>() >= shape.ranks)
          e.fail("nic_of/" + std::to_string(i), "expected a rank of this run, 0 to " + std::to_string(shape.ranks - 1));
        x.nic_of.push_back(static_cast<Rank>(v[i].get<std::int64_t>()));
      }
      e.resolved()["nic_of"] = x.nic_of;
    }
    read_window(e, x.from_s, x.until_s);
    x.down = e.boolean("down", false);
    if (x.down) {
      for (const char* key : {"bandwidth_factor", "latency_factor"}) {
        if (e.has(key)) e.fail(key, "a link that is down carries nothing: give down or the factors, not both");
      }
      if (x.until_s == kNever) {
        e.fail("until_s",
               "a link down has an end (until_s): the flows crossing it wait for it, and would wait for good");
      }
    }
    x.bandwidth_factor = e.number("bandwidth_factor", 1, 1e-6, 1e6);
    x.latency_factor = e.number("latency_factor", 1, 1e-6, 1e6);
    s.links.push_back(std::move(x));
  });
  std::vector<Rank> failing;
  each(r, "failures", [&](ConfigReader& e) {
    const RankEvent f{read_rank(e, "rank", shape), e.number("at_s", 0, 0, kMaxTime)};
    if (std::find(failing.begin(), failing.end(), f.rank) != failing.end()) e.fail("rank", "rank named twice");
    failing.push_back(f.rank);
    if (!e.has("restart_after_s")) {
      s.failures.push_back(f);
      return;
    }
    if (!shape.algorithm->restarts) {
      e.fail("restart_after_s",
             "algorithm \"" + shape.algorithm->name + "\" cannot restart a failed rank (only mpca's driver restarts)");
    }
    if (f.rank != 0) e.fail("restart_after_s", "only rank 0 (the driver) restarts; a failed worker stays lost");
    s.restarts.push_back({f.rank, f.at_s, e.number("restart_after_s", 0, 0, kMaxTime)});
  });
  read_events(r, "joins", shape, s.joins);
  read_events(r, "leaves", shape, s.leaves);
  r.finish();
  return s;
}

}  // namespace

std::shared_ptr<const Scenario> read_scenario(ConfigReader& root, const std::string& base_dir,
                                              const ScenarioShape& shape, nlohmann::json& resolved) {
  const nlohmann::json& v = root.raw("scenario");
  Scenario s;
  if (v.is_string()) {
    const std::string file = (fs::path(base_dir) / v.get<std::string>()).lexically_normal().string();
    if (const std::string why = input_file_problem(file); !why.empty())
      root.fail("scenario", "scenario file " + echo(file, 200) + ": " + why);
    ConfigReader r(read_json_file(file, "scenario file"), file, "");
    s = read_body(r, shape);
    s.where = file + ":";
    resolved = r.resolved();
    resolved["file"] = file;
  } else {
    ConfigReader r = root.child("scenario");
    s = read_body(r, shape);
    s.where = root.where("scenario");
    resolved = r.resolved();
  }
  if (!shape.algorithm->membership) {
    for (const char* key : {"joins", "leaves"}) {
      if ((key[0] == 'j' ? s.joins : s.leaves).empty()) continue;
      root.fail(std::string("scenario/") + key,
                "algorithm \"" + shape.algorithm->name + "\" has a fixed membership: it cannot run with " + key);
    }
  }
  for (const char* key : {"joins", "leaves"}) {  // the algorithms that change membership coordinate it from rank 0
    const std::vector<RankEvent>& events = key[0] == 'j' ? s.joins : s.leaves;
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].rank == 0) {
        root.fail(std::string("scenario/") + key + "/" + std::to_string(i) + "/rank",
                  "rank 0 coordinates the membership of \"" + shape.algorithm->name + "\": it cannot join or leave");
      }
    }
  }
  for (const RankEvent& j : s.joins) {
    for (const RankEvent& l : s.leaves) {
      if (j.rank == l.rank && l.at_s <= j.at_s) {
        root.fail("scenario/leaves", "rank " + std::to_string(l.rank) + " leaves at or before its join (joins)");
      }
    }
  }
  for (const RankEvent& f : s.failures) {
    for (const RankEvent& l : s.leaves) {
      if (f.rank == l.rank) root.fail("scenario/leaves", "rank " + std::to_string(f.rank) + " both fails and leaves");
    }
  }
  return std::make_shared<const Scenario>(std::move(s));
}

}  // namespace dts::exp
