// Reading a sweep file and expanding its grid.
#include "experiments/sweep/sweep_spec.hpp"

#include <algorithm>
#include <filesystem>

#include "core/config_reader.hpp"
#include "core/json_input.hpp"
#include "experiments/runner/result_dir.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

constexpr std::size_t kMaxPoints = 100000;

// "a.b.c": non-empty keys joined by dots, as --set takes them.
void check_key(const std::string& where, const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos ||
      key.find('=') != std::string::npos) {
    throw ConfigError(where, "\"" + echo(key, 60) + "\" is not a key path like algorithm.workers");
  }
  if (key == "name" || key.rfind("variants", 0) == 0)
    throw ConfigError(where, "\"" + echo(key, 60) + "\" names the result, not a setting; it cannot vary");
}

std::string set_arg(const std::string& key, const nlohmann::json& value) { return key + "=" + value.dump(); }

}  // namespace

Sweep read_sweep(const std::string& file) {
  const nlohmann::json j = read_json_file(file, "sweep file");
  if (!j.is_object()) throw ConfigError(file, "a sweep is a JSON object");
  ConfigReader r(j, file, "");
  const nlohmann::json absent;
  const auto optional = [&](const std::string& key) -> const nlohmann::json& {
    return r.has(key) ? r.raw(key) : absent;
  };
  Sweep s;
  s.file = file;
  s.name = r.string("name", fs::path(file).stem().string());
  r.string("description", "");  // for the reader
  if (const std::string why = plain_name_problem(s.name); !why.empty())
    r.fail("name", "a sweep's name names its result directory, and this one " + why);
  const std::string exp = r.require_string("experiment");
  const fs::path exp_path(exp);
  s.experiment = exp_path.is_absolute() ? exp : (fs::path(file).parent_path() / exp_path).lexically_normal().string();

  std::vector<std::string> fixed;
  const nlohmann::json& set = optional("set");
  if (!set.is_null()) {
    if (!set.is_object()) r.fail("set", "expected an object of key.path: value (as --set takes them)");
    for (const auto& [k, v] : set.items()) {
      check_key(r.where("set/" + k), k);
      fixed.push_back(set_arg(k, v));
    }
  }

  // The grid: every combination, the last key (alphabetically) varying fastest.
  std::vector<std::pair<std::string, nlohmann::json>> axes;
  const nlohmann::json& grid = optional("grid");
  if (!grid.is_null()) {
    if (!grid.is_object()) r.fail("grid", "expected an object of key.path: [values]");
    for (const auto& [k, v] : grid.items()) {
      check_key(r.where("grid/" + k), k);
      if (!v.is_array() || v.empty()) r.fail("grid/" + k, "expected a non-empty array of values");
      axes.emplace_back(k, v);
      s.varied.push_back(k);
    }
  }
  std::vector<std::vector<std::pair<std::string, nlohmann::json>>> combos;
  if (!axes.empty()) {
    std::size_t total = 1;
    for (const auto& [k, values] : axes) {
      total *= values.size();
      if (total > kMaxPoints) r.fail("grid", "more than " + std::to_string(kMaxPoints) + " points");
    }
    for (std::size_t i = 0; i < total; ++i) {
      std::vector<std::pair<std::string, nlohmann::json>> keys;
      std::size_t rest = i;
      for (std::size_t a = axes.size(); a-- > 0;) {
        const auto& values = axes[a].second;
        keys.emplace(keys.begin(), axes[a].first, values[rest % values.size()]);
        rest /= values.size();
      }
      combos.push_back(std::move(keys));
    }
  }
  const nlohmann::json& listed = optional("points");
  if (!listed.is_null()) {
    if (!listed.is_array()) r.fail("points", "expected an array of objects of key.path: value");
    for (std::size_t i = 0; i < listed.size(); ++i) {
      const std::string where = "points/" + std::to_string(i);
      if (!listed[i].is_object() || listed[i].empty()) r.fail(where, "expected a non-empty object of key.path: value");
      std::vector<std::pair<std::string, nlohmann::json>> keys;
      for (const auto& [k, v] : listed[i].items()) {
        check_key(r.where(where + "/" + k), k);
        keys.emplace_back(k, v);
        if (std::find(s.varied.begin(), s.varied.end(), k) == s.varied.end()) s.varied.push_back(k);
      }
      combos.push_back(std::move(keys));
      if (combos.size() > kMaxPoints) r.fail("points", "more than " + std::to_string(kMaxPoints) + " points");
    }
  }
  if (combos.empty()) r.fail("grid", "a sweep needs a grid or points");

  const std::size_t width = std::to_string(combos.size() - 1).size();
  s.expansion = {{"experiment", s.experiment}, {"points", nlohmann::json::array()}};
  for (std::size_t i = 0; i < combos.size(); ++i) {
    SweepPoint p;
    const std::string n = std::to_string(i);
    p.id = "p" + std::string(std::max<std::size_t>(width, 3) - n.size(), '0') + n;
    p.keys = std::move(combos[i]);
    p.sets = fixed;
    for (const auto& [k, v] : p.keys) p.sets.push_back(set_arg(k, v));
    s.expansion["points"].push_back({{"id", p.id}, {"sets", p.sets}});
    s.points.push_back(std::move(p));
  }

  const nlohmann::json& plots = optional("plots");
  if (!plots.is_null()) {
    if (!plots.is_array()) r.fail("plots", "expected an array of {x, y, series}");
    for (std::size_t i = 0; i < plots.size(); ++i) {
      const std::string where = "plots/" + std::to_string(i);
      if (!plots[i].is_object()) r.fail(where, "expected an object {x, y, series}");
      ConfigReader pr(plots[i], file, "/" + where);
      SweepPlot p{pr.require_string("x"), pr.require_string("y"), pr.string("series", "")};
      pr.finish();
      for (const std::string* key : {&p.x, &p.series}) {
        if (!key->empty() && std::find(s.varied.begin(), s.varied.end(), *key) == s.varied.end())
          throw ConfigError(pr.where(key == &p.x ? "x" : "series"), "\"" + echo(*key, 60) + "\" is not a varied key");
      }
      s.plots.push_back(p);
    }
  }
  r.finish();
  return s;
}

}  // namespace dts::exp
