// Runs the dtsim binary (path given by CMake) on experiment files written into a temporary directory,
// capturing its exit code and stderr, as a user would run it.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dts::test {

// The source tree, for the files the repository ships (ctest sets DTS_SOURCE_DIR; by hand, set it).
inline std::filesystem::path source_dir() {
  const char* src = std::getenv("DTS_SOURCE_DIR");
  if (src == nullptr) throw std::runtime_error("DTS_SOURCE_DIR is not set (ctest sets it to the source tree)");
  return src;
}

// A shipped platform file, platforms/NAME.
inline std::string platform_file(const std::string& name) { return (source_dir() / "platforms" / name).string(); }

struct CliResult {
  int code = -1;
  std::string err;
};

// `prefix` wraps the command (e.g. "timeout -s TERM 2 ").
inline CliResult run_dtsim(const std::string& args, const std::filesystem::path& dir, const std::string& prefix = "") {
  const auto err_file = dir / "stderr.txt";
  const std::string cmd = prefix + std::string(DTSIM_BINARY) + " " + args + " > " + (dir / "stdout.txt").string() +
                          " 2> " + err_file.string();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

inline void write_json(const std::filesystem::path& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2); }

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A study directory, experiments/STUDY.
inline std::filesystem::path study_dir(const std::string& study) { return source_dir() / "experiments" / study; }

// The JSON files of a study directory, sorted, without the run scripts' hidden copies.
inline std::vector<std::filesystem::path> study_files(const std::string& study) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(study_dir(study))) {
    if (e.path().extension() == ".json" && e.path().filename().string()[0] != '.') files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// A tiny real-numerics experiment: logistic regression on a synthetic set, 4 workers, an inline platform.
inline nlohmann::json tiny_experiment() {
  return {
      {"name", "tiny"},
      {"seed", 7},
      {"platform",
       {{"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}},
        {"link_bandwidth_bps", 1e9},
        {"link_latency_s", 1e-4}}},
      {"model", {{"name", "logreg"}, {"numerics", "real"}, {"backend", "onednn"}}},
      {"data", {{"name", "synthetic"}, {"train_samples", 2048}, {"test_samples", 512}, {"height", 6}, {"width", 6}}},
      {"algorithm", {{"name", "allreduce_sgd"}, {"workers", 4}, {"batch_size", 16}, {"optimizer", {{"lr", 0.1}}}}},
      {"run", {{"epochs", 2}, {"eval_every_steps", 8}, {"log_every_steps", 4}}},
      {"variants", {{{"name", "allreduce_sgd"}}, {{"name", "easgd_async"}, {"algorithm", {{"name", "easgd_async"}}}}}}};
}

}  // namespace dts::test
