// Reading a calibration file.
#include "experiments/calibrate/calibration_spec.hpp"

#include <cmath>
#include <filesystem>

#include "core/config_reader.hpp"
#include "core/json_input.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

constexpr std::size_t kMaxParameters = 16, kMaxTargets = 200;

std::string beside(const std::string& file, const std::string& path) {
  const fs::path p(path);
  return p.is_absolute() ? path : (fs::path(file).parent_path() / p).lexically_normal().string();
}

// A pointer to a number of the platform: "/a/b" through objects, or "/a/0/1" into an array the platform file
// itself has (or a fixed value sets), within its length (the fitted file is a merge patch over the platform, and a
// merge patch replaces arrays whole: candidate() copies such an array from the platform file, so an absent one cannot
// be patched).
void check_pointer(const ConfigReader& r, const std::string& key, const std::string& ptr, const nlohmann::json& plat,
                   const std::string& what, bool number = true) {
  nlohmann::json::json_pointer p;
  try {
    p = nlohmann::json::json_pointer(ptr);
  } catch (const nlohmann::json::exception&) {
    r.fail(key, "\"" + echo(ptr, 60) + "\" is not a JSON pointer like /link_latency_s");
  }
  if (p.empty()) r.fail(key, "the empty pointer names the whole " + what);
  if (plat.is_null()) return;
  const nlohmann::json* at = &plat;
  std::string walked;
  nlohmann::json::json_pointer rest = p;
  std::vector<std::string> parts;
  while (!rest.empty()) {
    parts.insert(parts.begin(), rest.back());
    rest.pop_back();
  }
  const auto index = [](const std::string& s) {
    return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos &&
           (s == "0" || s[0] != '0');
  };
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (at->is_array()) {
      if (!index(parts[i]) || std::stoul(parts[i]) >= at->size()) {
        r.fail(key, walked + " is an array of " + std::to_string(at->size()) + " in the " + what + ": \"" +
                        echo(parts[i], 20) + "\" is not one of its indices");
      }
      walked += "/" + parts[i];
      at = &(*at)[std::stoul(parts[i])];
      continue;
    }
    if (!at->is_object()) {
      r.fail(key, (walked.empty() ? "the " + what : walked) + " is not an object in the " + what +
                      ": a parameter names a number inside objects and arrays (write the object out, e.g. a device "
                      "given by its catalog name, to fit one of its figures)");
    }
    walked += "/" + parts[i];
    if (!at->contains(parts[i])) {  // absent: the fitted value adds it, as a member of objects only
      for (std::size_t j = i + 1; j < parts.size(); ++j) {
        if (index(parts[j]))
          r.fail(key, walked + " is absent from the " + what +
                          ": a fitted number inside an array needs the array in the " + what + " itself");
      }
      return;
    }
    at = &(*at)[parts[i]];
  }
  if (number && !at->is_number()) r.fail(key, walked + " is not a number in the " + what);
}

}  // namespace

std::string run_key(const CalibrationTarget& t) {
  nlohmann::json k = {t.experiment, t.variant, t.sets};
  return k.dump();
}

Calibration read_calibration(const std::string& file) {
  const nlohmann::json j = read_json_file(file, "calibration file");
  if (!j.is_object()) throw ConfigError(file, "a calibration file is a JSON object");
  ConfigReader r(j, file, "");
  Calibration c;
  c.file = file;
  c.name = r.string("name", fs::path(file).stem().string());
  r.string("description", "");
  c.platform = beside(file, r.require_string("platform"));
  if (const std::string why = input_file_problem(c.platform); !why.empty())
    r.fail("platform", "platform file " + echo(c.platform, 200) + ": " + why);
  c.platform_j = read_json_file(c.platform, "platform file");
  if (!c.platform_j.is_object()) r.fail("platform", "platform file " + echo(c.platform, 200) + " is not an object");
  if (c.platform_j.contains("calibration"))
    r.fail("platform", "platform file " + echo(c.platform, 200) +
                           " is itself a calibrated file (it has a \"calibration\" record): fit its base instead");
  if (r.has("output")) c.output = beside(file, r.require_string("output"));

  ConfigReader fit = r.child("fit");
  c.max_evaluations = static_cast<int>(fit.integer("max_evaluations", c.max_evaluations, 4, 100000));
  c.tolerance = fit.number("tolerance", c.tolerance, 1e-9, 0.5);
  fit.finish();

  // Fixed values first: a fitted number may sit inside an array that a fixed value sets.
  nlohmann::json with_fixed = c.platform_j;
  if (r.has("fixed")) {
    const auto& fixed = r.raw("fixed");
    if (!fixed.is_object()) r.fail("fixed", "expected an object of JSON pointer: value");
    for (const auto& [k, v] : fixed.items()) {
      check_pointer(r, "fixed/" + k, k, c.platform_j, "platform file", false);
      c.fixed.emplace_back(k, v);
      with_fixed[nlohmann::json::json_pointer(k)] = v;
    }
  }

  auto params = r.items("parameters");
  if (params.empty()) r.fail("parameters", "expected a non-empty array of {key, min, max}");
  if (params.size() > kMaxParameters) r.fail("parameters", "more than " + std::to_string(kMaxParameters));
  for (auto& p : params) {
    FreeParameter fp;
    fp.key = p.require_string("key");
    check_pointer(p, "key", fp.key, with_fixed, "platform file");
    for (const auto& [k, v] : c.fixed) {
      if (k == fp.key) p.fail("key", "\"" + echo(fp.key, 60) + "\" is also a fixed value");
    }
    for (const auto& other : c.parameters) {
      if (other.key == fp.key) p.fail("key", "\"" + echo(fp.key, 60) + "\" is fitted twice");
    }
    fp.log = p.choice("scale", "log", {"log", "linear"}) == "log";
    fp.min = p.require_number("min", fp.log ? 1e-300 : -1e300, 1e300);
    fp.max = p.require_number("max", fp.min, 1e300);
    if (!(fp.max > fp.min)) p.fail("max", "must be greater than min");
    const double mid = fp.log ? std::sqrt(fp.min) * std::sqrt(fp.max) : (fp.min + fp.max) / 2;
    fp.start = p.number("start", mid, fp.min, fp.max);
    p.finish();
    c.parameters.push_back(fp);
  }

  auto targets = r.items("targets");
  if (targets.empty()) r.fail("targets", "expected a non-empty array of {name, experiment, figure, value}");
  if (targets.size() > kMaxTargets) r.fail("targets", "more than " + std::to_string(kMaxTargets));
  for (auto& t : targets) {
    CalibrationTarget ct;
    ct.name = t.require_string("name");
    for (const auto& other : c.targets) {
      if (other.name == ct.name) t.fail("name", "\"" + echo(ct.name, 60) + "\" names two targets");
    }
    ct.experiment = beside(file, t.require_string("experiment"));
    if (const std::string why = input_file_problem(ct.experiment); !why.empty())
      t.fail("experiment", "experiment file " + echo(ct.experiment, 200) + ": " + why);
    const nlohmann::json exp = read_json_file(ct.experiment, "experiment file");
    const nlohmann::json* variants = exp.is_object() && exp.contains("variants") ? &exp["variants"] : nullptr;
    const bool has_variants = variants != nullptr && variants->is_array() && !variants->empty();
    ct.variant = t.string("variant", "");
    if (has_variants && ct.variant.empty())
      t.fail("variant", "the experiment has variants: name the one that produces this figure");
    if (!ct.variant.empty()) {
      if (!has_variants) t.fail("variant", "the experiment has no variants");
      for (const auto& v : *variants) {
        if (v.is_object() && v.value("name", "") == ct.variant) ct.variant_patch = v;
      }
      if (ct.variant_patch.is_null())
        t.fail("variant", "the experiment has no variant \"" + echo(ct.variant, 60) + "\"");
    }
    if (t.has("set")) {
      const auto& set = t.raw("set");
      if (!set.is_object()) t.fail("set", "expected an object of key.path: value (as --set takes them)");
      for (const auto& [k, v] : set.items()) {
        if (k == "platform" || k.rfind("platform.", 0) == 0 || k.rfind("variants", 0) == 0)
          t.fail("set/" + k, "calibrate sets the platform and the variant itself");
        ct.sets.push_back(k + "=" + v.dump());
      }
    }
    ct.figure = t.require_string("figure");
    check_pointer(t, "figure", ct.figure, nullptr, "summary");
    ct.divide_by = t.string("divide_by", "");
    if (!ct.divide_by.empty()) check_pointer(t, "divide_by", ct.divide_by, nullptr, "summary");
    ct.value = t.require_number("value", -1e300, 1e300);
    ct.weight = t.number("weight", 1, 0, 1e6);
    ct.source = t.require_string("source");
    t.finish();
    c.targets.push_back(ct);
  }
  r.finish();
  return c;
}

}  // namespace dts::exp
