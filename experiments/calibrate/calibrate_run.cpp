// Running a calibration: candidates, their runs, the fit and the fitted platform file.
#include "experiments/calibrate/calibrate_run.hpp"

#include <signal.h>
#include <unistd.h>

#include <csignal>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "core/child_process.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "experiments/calibrate/calibration_spec.hpp"
#include "experiments/calibrate/nelder_mead.hpp"
#include "experiments/runner/result_dir.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace dts::exp {
namespace {

const char* const kBy = "dtsim calibrate";

// SIGINT / SIGTERM: the current run ends (Ctrl-C reaches it too; a SIGTERM to dtsim calibrate alone lets it
// finish), then the work directory is removed and the command exits 130, writing nothing.
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_calibrate_stop(int) { g_stop = 1; }
struct Interrupted {};

double value_of(const FreeParameter& p, double u) {
  return p.log ? std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min))) : p.min + u * (p.max - p.min);
}
double unit_of(const FreeParameter& p, double v) {
  const double u =
      p.log ? (std::log(v) - std::log(p.min)) / (std::log(p.max) - std::log(p.min)) : (v - p.min) / (p.max - p.min);
  return std::clamp(u, 0.0, 1.0);
}

// Where the fitted platform goes; refuses a file that a calibration did not write, and any without --force.
fs::path check_output(const Calibration& c, const CalibrateOptions& opt) {
  const std::string out = opt.out.empty() ? c.output : opt.out;
  if (out.empty())
    throw InputError("--out", "name the fitted platform file (or give the calibration file an output key)");
  const fs::path p = fs::absolute(out).lexically_normal();
  if (!fs::is_directory(p.parent_path()))
    throw InputError("--out", shown(p).string() + ": its directory does not exist");
  if (fs::exists(p) || fs::is_symlink(p)) {
    json old;
    try {
      old = fs::is_regular_file(p) ? read_json_file(p.string(), "platform file") : json();
    } catch (const InputError&) {
    }
    const bool ours = old.is_object() && old.contains("calibration") && old["calibration"].is_object() &&
                      old["calibration"].value("by", "") == kBy;
    if (!ours)
      throw InputError("--out", shown(p).string() + " exists and dtsim calibrate did not write it; it is left alone");
    if (!opt.force)
      throw InputError("--out", shown(p).string() + " exists (a calibrated platform): --force replaces it");
  }
  if (fs::equivalent(p.parent_path(), fs::path(c.platform).parent_path()) &&
      p.filename() == fs::path(c.platform).filename())
    throw InputError("--out", "the fitted file cannot replace the platform it is fitted from");
  return p;
}

// The directory the runs go into: --keep-runs (new), or a temporary one, removed at the end.
class WorkDir {
 public:
  explicit WorkDir(const std::string& keep) : keep_(!keep.empty()) {
    if (keep_) {
      path_ = fs::absolute(keep).lexically_normal();
      if (fs::exists(path_) || fs::is_symlink(path_))
        throw InputError("--keep-runs", shown(path_).string() + " exists; name a new directory");
      fs::create_directories(path_);
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "dtsim-calibrate-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory in /tmp");
    path_ = tmpl;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const fs::path& path() const { return path_; }
  bool keep() const { return keep_; }

 private:
  bool keep_;
  fs::path path_;
};

struct Run {                        // one `dtsim run` that one or more targets read
  const CalibrationTarget* target;  // the first target that needs it (experiment, variant, sets)
  std::vector<std::size_t> targets;
};

std::vector<Run> runs_of(const Calibration& c) {
  std::vector<Run> runs;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < c.targets.size(); ++i) {
    const auto [it, fresh] = index.emplace(run_key(c.targets[i]), runs.size());
    if (fresh) runs.push_back({&c.targets[i], {}});
    runs[it->second].targets.push_back(i);
  }
  return runs;
}

// The candidate platform: the fitted keys over the platform file.
json candidate(const Calibration& c, const std::vector<double>& values, const std::string& base) {
  json j = json::object();
  j["base"] = base;
  for (const auto& [key, value] : c.fixed) j[json::json_pointer(key)] = value;
  for (std::size_t i = 0; i < c.parameters.size(); ++i) {
    // A merge patch replaces an array whole: the first array on the key's way comes over from the platform file
    // (check_pointer made sure it is there), then the fitted number goes into it.
    const json::json_pointer key(c.parameters[i].key);
    std::vector<std::string> parts;
    for (json::json_pointer rest = key; !rest.empty(); rest.pop_back()) parts.insert(parts.begin(), rest.back());
    json::json_pointer way;
    for (const std::string& part : parts) {
      way /= part;
      if (c.platform_j.contains(way) && c.platform_j.at(way).is_array()) {
        if (!j.contains(way)) j[way] = c.platform_j.at(way);
        break;
      }
    }
    j[key] = values[i];
  }
  return j;
}

// Runs `dtsim run` on one target's experiment; returns its exit code and standard error.
std::pair<int, std::string> run_dtsim(const CalibrationTarget& t, const fs::path& platform, const fs::path& out,
                                      const CalibrateOptions& opt, bool check) {
  std::vector<std::string> args = {
      "dtsim", "run", t.experiment, "--out", out.string(), "--set", "platform=" + json(platform.string()).dump()};
  if (!t.variant.empty()) {
    args.push_back("--set");
    args.push_back("variants=" + json::array({t.variant_patch}).dump());
  }
  for (const auto& s : t.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  if (check) args.push_back("--check");
  args.insert(args.end(), opt.simgrid_args.begin(), opt.simgrid_args.end());
  ChildOptions co;
  co.pipe = ChildOptions::Pipe::kStderr;
  co.stdout_to_null = true;
  co.die_with_parent = true;
  ChildProcess child([&](int) { return exec_self(args); }, co);
  std::string err = child.read_all();
  const ChildExit e = child.wait([] { return g_stop != 0; });
  if (g_stop) throw Interrupted{};
  return {e.exited() ? e.code() : 1, err};
}

std::string where_target(const Calibration& c, std::size_t i) { return c.file + ":/targets/" + std::to_string(i); }

double figure_of(const Calibration& c, std::size_t i, const json& summary, const std::string& ptr,
                 const std::string& key) {
  const json::json_pointer p(ptr);
  if (!summary.contains(p) || !summary.at(p).is_number())
    throw InputError(where_target(c, i) + "/" + key, "the run's summary.json has no number at " + ptr);
  return summary.at(p).get<double>();
}

struct Evaluation {
  std::vector<double> values;   // the parameters
  std::vector<double> figures;  // one per target
  double objective = 0;
};

double error_of(const CalibrationTarget& t, double figure) {
  return t.value != 0 ? (figure - t.value) / std::abs(t.value) : figure - t.value;
}

class Evaluator {
 public:
  Evaluator(const Calibration& c, const CalibrateOptions& opt, const WorkDir& work)
      : c_(c), opt_(opt), work_(work), runs_(runs_of(c)) {}

  // Checks every run with `dtsim run --check` on the start values.
  void check() {
    const fs::path dir = work_.path() / "check";
    fs::create_directories(dir);
    const fs::path plat = write_platform(dir, start_values());
    for (std::size_t k = 0; k < runs_.size(); ++k) {
      const auto [code, err] = run_dtsim(*runs_[k].target, plat, dir / ("run" + std::to_string(k)), opt_, true);
      if (code != 0) fail(k, code, err);
    }
  }

  const Evaluation& evaluate(const std::vector<double>& values) {
    if (const auto it = cache_.find(values); it != cache_.end()) return it->second;
    const std::size_t n = ++count_;
    char id[16];
    std::snprintf(id, sizeof id, "e%04zu", n);
    const fs::path dir = work_.path() / id;
    fs::create_directories(dir);
    const fs::path plat = write_platform(dir, values);
    Evaluation ev{values, std::vector<double>(c_.targets.size()), 0};
    for (std::size_t k = 0; k < runs_.size(); ++k) {
      const fs::path out = dir / ("run" + std::to_string(k));
      const auto [code, err] = run_dtsim(*runs_[k].target, plat, out, opt_, false);
      if (code != 0) fail(k, code, err);
      const CalibrationTarget& t = *runs_[k].target;
      const json summary = read_json_file((t.variant.empty() ? out : out / t.variant) / "summary.json", "summary");
      for (const std::size_t i : runs_[k].targets) {
        const CalibrationTarget& ti = c_.targets[i];
        double f = figure_of(c_, i, summary, ti.figure, "figure");
        if (!ti.divide_by.empty()) f /= figure_of(c_, i, summary, ti.divide_by, "divide_by");
        ev.figures[i] = f;
        const double e = error_of(ti, f);
        ev.objective += ti.weight * e * e;
      }
    }
    if (!work_.keep()) fs::remove_all(dir);
    best_ = std::min(best_, ev.objective);
    std::fprintf(stderr, "[calibrate %s] evaluation %zu/%d:", c_.name.c_str(), n, c_.max_evaluations);
    for (std::size_t i = 0; i < values.size(); ++i)
      std::fprintf(stderr, " %s=%.6g", c_.parameters[i].key.c_str(), values[i]);
    std::fprintf(stderr, "  error %.4g (best %.4g)\n", ev.objective, best_);
    return cache_.emplace(values, std::move(ev)).first->second;
  }

  std::vector<double> start_values() const {
    std::vector<double> v;
    for (const auto& p : c_.parameters) v.push_back(p.start);
    return v;
  }

 private:
  fs::path write_platform(const fs::path& dir, const std::vector<double>& values) const {
    const fs::path p = dir / "platform.json";
    std::ofstream(p) << candidate(c_, values, fs::absolute(c_.platform).lexically_normal().string()).dump(2) << '\n';
    return p;
  }

  [[noreturn]] void fail(std::size_t k, int code, const std::string& err) const {
    std::string names;
    for (const std::size_t i : runs_[k].targets) names += (names.empty() ? "" : ", ") + c_.targets[i].name;
    const std::string what = "the run of target " + names + " (" + runs_[k].target->experiment +
                             (runs_[k].target->variant.empty() ? "" : ", variant " + runs_[k].target->variant) +
                             ") exited " + std::to_string(code) + ":\n" + err;
    if (code == 2) throw InputError(where_target(c_, runs_[k].targets[0]), what);
    throw std::runtime_error(what);
  }

  const Calibration& c_;
  const CalibrateOptions& opt_;
  const WorkDir& work_;
  std::vector<Run> runs_;
  std::map<std::vector<double>, Evaluation> cache_;
  std::size_t count_ = 0;
  double best_ = INFINITY;
};

json record(const Calibration& c, const Evaluation& best, const SimplexResult& fit, const fs::path& out) {
  json params = json::array(), targets = json::array();
  for (std::size_t i = 0; i < c.parameters.size(); ++i) {
    const FreeParameter& p = c.parameters[i];
    params.push_back({{"key", p.key},
                      {"scale", p.log ? "log" : "linear"},
                      {"min", p.min},
                      {"max", p.max},
                      {"start", p.start},
                      {"fitted", best.values[i]}});
  }
  const fs::path from = out.parent_path();
  for (std::size_t i = 0; i < c.targets.size(); ++i) {
    const CalibrationTarget& t = c.targets[i];
    json tj = {{"name", t.name},
               {"experiment", fs::absolute(t.experiment).lexically_normal().lexically_relative(from).string()},
               {"figure", t.figure},
               {"value", t.value},
               {"weight", t.weight},
               {"source", t.source},
               {"fitted_figure", best.figures[i]},
               {"error", error_of(t, best.figures[i])},
               {"error_kind", t.value != 0 ? "relative" : "absolute"}};
    if (!t.variant.empty()) tj["variant"] = t.variant;
    if (!t.divide_by.empty()) tj["divide_by"] = t.divide_by;
    if (!t.sets.empty()) tj["set"] = t.sets;
    targets.push_back(tj);
  }
  json fixed = json::object();
  for (const auto& [key, value] : c.fixed) fixed[key] = value;
  return {{"by", kBy},
          {"fixed", fixed},
          {"calibration_file", fs::absolute(c.file).lexically_normal().lexically_relative(from).string()},
          {"name", c.name},
          {"parameters", params},
          {"targets", targets},
          {"objective", best.objective},
          {"evaluations", fit.evaluations},
          {"converged", fit.converged}};
}

void print_table(const Calibration& c, const Evaluation& best) {
  std::printf("%-32s %12s %12s %10s  %s\n", "target", "value", "fitted", "error", "source");
  for (std::size_t i = 0; i < c.targets.size(); ++i) {
    const CalibrationTarget& t = c.targets[i];
    const double e = error_of(t, best.figures[i]);
    std::printf("%-32s %12.6g %12.6g %9.2f%s  %s\n", t.name.c_str(), t.value, best.figures[i],
                t.value != 0 ? 100 * e : e, t.value != 0 ? "%" : " ", t.source.c_str());
  }
  for (std::size_t i = 0; i < c.parameters.size(); ++i) {
    const FreeParameter& p = c.parameters[i];
    const double u = unit_of(p, best.values[i]);
    std::printf("%s = %.6g (start %.6g, %s range [%.6g, %.6g])%s\n", p.key.c_str(), best.values[i], p.start,
                p.log ? "log" : "linear", p.min, p.max,
                u < 1e-6 || u > 1 - 1e-6 ? ": at the range's bound, the targets want a value beyond it" : "");
  }
}

int fit_and_write(const Calibration& c, const fs::path& out, const CalibrateOptions& opt) {
  const WorkDir work(opt.keep_runs);
  Evaluator ev(c, opt, work);
  ev.check();
  if (opt.check) {
    std::printf("%s: ok, %zu parameters, %zu targets -> %s\n", c.name.c_str(), c.parameters.size(), c.targets.size(),
                shown(out).c_str());
    return 0;
  }
  const auto values = [&](const std::vector<double>& u) {
    std::vector<double> v;
    for (std::size_t i = 0; i < u.size(); ++i) v.push_back(value_of(c.parameters[i], u[i]));
    return v;
  };
  std::vector<double> start;
  for (const auto& p : c.parameters) start.push_back(unit_of(p, p.start));
  SimplexOptions so;
  so.max_evaluations = c.max_evaluations;
  so.x_tolerance = c.tolerance;
  const SimplexResult fit =
      nelder_mead([&](const std::vector<double>& u) { return ev.evaluate(values(u)).objective; }, start, so);
  const Evaluation& best = ev.evaluate(values(fit.x));  // cached
  json j = candidate(c, best.values,
                     fs::absolute(c.platform).lexically_normal().lexically_relative(out.parent_path()).string());
  j["name"] = out.stem().string();
  j["calibration"] = record(c, best, fit, out);
  const fs::path tmp = out.string() + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream f(tmp);
    f << j.dump(2) << '\n';
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, out);
  print_table(c, best);
  std::printf("-> %s (%d evaluations, %s)\n", shown(out).c_str(), fit.evaluations,
              fit.converged ? "converged" : "stopped at fit.max_evaluations");
  return 0;
}

}  // namespace

int run_calibration(const CalibrateOptions& opt) {
  const Calibration c = read_calibration(opt.file);
  const fs::path out = check_output(c, opt);
  struct sigaction sa {};
  sa.sa_handler = on_calibrate_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    return fit_and_write(c, out, opt);
  } catch (const Interrupted&) {
    std::fprintf(stderr, "[calibrate %s] interrupted: nothing written\n", c.name.c_str());
    return 130;
  }
}

}  // namespace dts::exp
