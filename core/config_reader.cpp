// ConfigReader: strict typed access with JSON-path error messages.
#include "core/config_reader.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace dts {

ConfigReader::ConfigReader(const nlohmann::json& j, std::string file, std::string path)
    : j_(j.is_null() ? nlohmann::json::object() : j), file_(echo(file, 200)), path_(std::move(path)) {
  if (!j_.is_object()) throw ConfigError(file_ + ":" + (path_.empty() ? "/" : path_), "expected a JSON object");
}

const nlohmann::json& ConfigReader::at(const std::string& key) {
  read_.insert(key);
  return j_.at(key);
}

double ConfigReader::number(const std::string& key, double def, double lo, double hi) {
  double v = def;
  if (has(key)) {
    const auto& x = at(key);
    if (!x.is_number()) fail(key, "expected a number, got " + echo_json(x));
    v = x.get<double>();
  }
  if (!std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream os;
    os << "value " << v << " out of range [" << lo << ", " << hi << "]";
    fail(key, os.str());
  }
  resolved_[key] = v;
  return v;
}

std::int64_t ConfigReader::integer(const std::string& key, std::int64_t def, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = def;
  if (has(key)) {
    const auto& x = at(key);
    if (!x.is_number_integer()) fail(key, "expected an integer, got " + echo_json(x));
    if (x.is_number_unsigned() &&
        x.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(key, "value " + x.dump() + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    v = x.get<std::int64_t>();
  }
  if (v < lo || v > hi) {
    fail(key, "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  resolved_[key] = v;
  return v;
}

bool ConfigReader::boolean(const std::string& key, bool def) {
  bool v = def;
  if (has(key)) {
    const auto& x = at(key);
    if (!x.is_boolean()) fail(key, "expected true or false, got " + echo_json(x));
    v = x.get<bool>();
  }
  resolved_[key] = v;
  return v;
}

std::string ConfigReader::string(const std::string& key, const std::string& def) {
  std::string v = def;
  if (has(key)) {
    const auto& x = at(key);
    if (!x.is_string()) fail(key, "expected a string, got " + echo_json(x));
    v = x.get<std::string>();
  }
  resolved_[key] = v;
  return v;
}

std::string ConfigReader::choice(const std::string& key, const std::string& def,
                                 std::initializer_list<const char*> options) {
  const std::string v = string(key, def);
  std::string known;
  for (const char* o : options) {
    if (v == o) return v;
    known += (known.empty() ? "" : ", ") + std::string(o);
  }
  fail(key, "unknown value \"" + echo(v) + "\" (expected one of: " + known + ")");
}

double ConfigReader::require_number(const std::string& key, double lo, double hi) {
  if (!has(key)) fail(key, "required key is missing");
  return number(key, 0.0, lo, hi);
}

std::string ConfigReader::require_string(const std::string& key) {
  if (!has(key)) fail(key, "required key is missing");
  return string(key, "");
}

ConfigReader ConfigReader::child(const std::string& key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  return ConfigReader(has(key) ? at(key) : kEmpty, file_, path_ + "/" + key);
}

std::vector<ConfigReader> ConfigReader::items(const std::string& key) {
  std::vector<ConfigReader> out;
  if (!has(key)) return out;
  const nlohmann::json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array of objects");
  for (std::size_t i = 0; i < v.size(); ++i) out.emplace_back(v[i], file_, path_ + "/" + key + "/" + std::to_string(i));
  return out;
}

const nlohmann::json& ConfigReader::raw(const std::string& key) { return at(key); }

void ConfigReader::finish() const {
  for (const auto& [key, value] : j_.items()) {
    if (read_.count(key) == 0) throw ConfigError(where(echo(key, 40)), "unknown key");
  }
}

}  // namespace dts
