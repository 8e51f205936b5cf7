// Strict reading of one JSON object of an experiment (DESIGN.md §5, STYLE.md §6): every key must be read,
// every value must have the right type and range, and errors name the file and the JSON path
// ("exp.json:/algorithm/elastic_alfa: unknown key"). The values actually used, defaults included, are
// written back to `resolved()` for config.resolved.json.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/json_input.hpp"

namespace dts {

class ConfigReader {
 public:
  // `j` must be a JSON object; `path` is its JSON pointer ("" for the root).
  ConfigReader(const nlohmann::json& j, std::string file, std::string path);

  bool has(const std::string& key) const { return j_.contains(key); }
  // Optional keys with a default; `lo`/`hi` bound numbers (inclusive).
  double number(const std::string& key, double def, double lo, double hi);
  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t lo, std::int64_t hi);
  bool boolean(const std::string& key, bool def);
  std::string string(const std::string& key, const std::string& def);
  std::string choice(const std::string& key, const std::string& def, std::initializer_list<const char*> options);
  // Required keys.
  double require_number(const std::string& key, double lo, double hi);
  std::string require_string(const std::string& key);
  // A nested object (it must be an object if present; an absent key reads as {}).
  ConfigReader child(const std::string& key);
  // An array of objects (absent: empty), one reader each; the caller reads and finishes each, and may record
  // their resolved() values under resolved()[key].
  std::vector<ConfigReader> items(const std::string& key);
  // Marks a key as read without interpreting it (the caller handles it) and returns its raw value.
  const nlohmann::json& raw(const std::string& key);
  // Throws for every key that was never read. Call once all keys are read.
  void finish() const;

  const nlohmann::json& resolved() const { return resolved_; }
  nlohmann::json& resolved() { return resolved_; }
  std::string where(const std::string& key) const { return file_ + ":" + path_ + "/" + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const { throw ConfigError(where(key), what); }

 private:
  const nlohmann::json& at(const std::string& key);
  nlohmann::json j_;
  std::string file_, path_;
  std::set<std::string> read_;
  nlohmann::json resolved_ = nlohmann::json::object();
};

}  // namespace dts
