// Collating a sweep's result directories into one table.
#include "experiments/sweep/sweep_table.hpp"

#include <fstream>

#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "experiments/runner/result_dir.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

using Row = nlohmann::ordered_json;

// A CSV cell: strings as they are (quoted when they hold a comma, quote or line break), the rest as JSON.
std::string cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

void add_figures(Row& row, const nlohmann::json& summary) {
  for (const auto& [k, v] : summary.items()) {
    if (v.is_number() || v.is_string() || v.is_boolean() || v.is_null()) row[k] = v;
  }
  const auto& run = summary.contains("time_breakdown") ? summary["time_breakdown"]["run"] : nlohmann::json();
  if (run.is_object() && run.contains("communication_ratio")) row["communication_ratio"] = run["communication_ratio"];
}

// The result directories of one point: itself, or one per variant (sorted by name).
std::vector<std::pair<std::string, fs::path>> point_results(const fs::path& dir) {
  if (fs::exists(dir / "summary.json")) return {{"", dir}};
  std::vector<std::pair<std::string, fs::path>> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && fs::exists(e.path() / "summary.json"))
      out.emplace_back(e.path().filename().string(), e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

}  // namespace

std::vector<std::string> missing_points(const Sweep& sweep, const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& p : sweep.points) {
    if (!holds_result(dir / p.id)) out.push_back(p.id);
  }
  return out;
}

std::size_t write_sweep_table(const Sweep& sweep, const fs::path& dir) {
  std::vector<Row> rows;
  std::vector<std::string> columns = {"point", "variant"};
  columns.insert(columns.end(), sweep.varied.begin(), sweep.varied.end());
  for (const auto& p : sweep.points) {
    for (const auto& [variant, result] : point_results(dir / p.id)) {
      Row row;
      row["point"] = p.id;
      row["variant"] = variant;
      for (const auto& key : sweep.varied) row[key] = nullptr;
      for (const auto& [k, v] : p.keys) row[k] = v;
      add_figures(row, read_json_file((result / "summary.json").string(), "summary"));
      for (const auto& [k, v] : row.items()) {
        if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
      }
      rows.push_back(std::move(row));
    }
  }
  std::string csv;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (c) csv += ',';
    csv += cell(columns[c]);
  }
  csv += '\n';
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  for (const Row& row : rows) {
    Row ordered;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto it = row.find(columns[c]);
      const nlohmann::ordered_json v = it == row.end() ? nlohmann::ordered_json() : *it;
      if (c) csv += ',';
      csv += cell(v);
      ordered[columns[c]] = v;
    }
    csv += '\n';
    table.push_back(std::move(ordered));
  }
  write_atomically(dir / "table.csv", csv);
  write_atomically(dir / "table.json", table.dump(2) + "\n");
  return rows.size();
}

}  // namespace dts::exp
