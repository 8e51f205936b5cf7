// Running a sweep's points as child processes of this binary, and where the sweep's directory may be.
#include "experiments/sweep/sweep_run.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "core/child_process.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner/metrics.hpp"
#include "experiments/runner/result_dir.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "experiments/sweep/sweep_table.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

constexpr const char* kMarker = "sweep.json";  // the expansion; marks a directory as a sweep's

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop(int) { g_stop = 1; }

struct Shard {
  int k = 0, n = 1;
  std::string job;  // the mpirun job all shards belong to ("" without mpirun: no waiting for the others)
};

Shard shard_of(const SweepOptions& opt) {
  Shard s;
  if (!opt.shard.empty()) {
    const auto slash = opt.shard.find('/');
    char* end = nullptr;
    const long k = std::strtol(opt.shard.c_str(), &end, 10);
    const long n = slash == std::string::npos ? 0 : std::strtol(opt.shard.c_str() + slash + 1, &end, 10);
    if (slash == std::string::npos || *end != '\0' || n < 1 || n > 100000 || k < 0 || k >= n)
      throw InputError("--shard " + echo(opt.shard), "expected K/N with 0 <= K < N");
    s.k = static_cast<int>(k);
    s.n = static_cast<int>(n);
    return s;
  }
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* job = std::getenv("PMIX_NAMESPACE");
  if (rank && size) {
    s.k = std::atoi(rank);
    s.n = std::max(1, std::atoi(size));
    s.job = job ? job : "mpirun";
  }
  return s;
}

std::string expansion_text(const Sweep& sweep) { return sweep.expansion.dump(1) + "\n"; }

// Creates the sweep's directory, or checks that an existing one holds this very sweep (to resume it). A
// directory that holds another sweep is started over only with --force, and then only what that sweep wrote is
// removed; one that holds no sweep is never touched.
void prepare_dir(const Sweep& sweep, const fs::path& dir, const SweepOptions& opt, bool writer) {
  const fs::path cwd = fs::current_path();
  for (fs::path p = cwd; !p.empty(); p = p.parent_path()) {
    if (p == dir) throw InputError("--out " + echo(dir.string()), "is the current directory or holds it");
    if (p == p.parent_path()) break;
  }
  if (fs::exists(dir) && !fs::is_directory(dir)) throw InputError("--out " + echo(dir.string()), "is not a directory");
  const fs::path marker = dir / kMarker;
  if (fs::exists(dir) && !fs::exists(marker)) {
    throw InputError("--out " + echo(dir.string()),
                     "exists and holds no dtsim sweep; dtsim writes a sweep only into a new directory or its own");
  }
  if (fs::exists(marker)) {
    std::ifstream in(marker, std::ios::binary);
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (old == expansion_text(sweep)) return;  // the same sweep: resume it
    if (!opt.force) {
      throw InputError("--out " + echo(dir.string()),
                       "holds a different sweep (another experiment or other points); --force starts it over");
    }
    if (!writer) return;
    const nlohmann::json previous = read_json_file(marker.string(), "sweep marker");
    for (const auto& p : previous.value("points", nlohmann::json::array())) {
      const fs::path point = dir / p.value("id", std::string("-"));
      if (plain_name_problem(p.value("id", std::string())).empty() && holds_result(point)) fs::remove_all(point);
      fs::remove(dir / "logs" / (p.value("id", std::string("-")) + ".log"));
    }
    for (const char* f : {"table.csv", "table.json", kMarker}) fs::remove(dir / f);
  }
  if (!writer) return;
  fs::create_directories(dir / "logs");
  const fs::path tmp = dir / (std::string(kMarker) + ".tmp");
  std::ofstream(tmp, std::ios::binary) << expansion_text(sweep);
  fs::rename(tmp, marker);
}

// One point's `dtsim run`, its output into logs/<id>.log.
std::unique_ptr<ChildProcess> start_point(const Sweep& sweep, const SweepPoint& p, const fs::path& dir,
                                          const SweepOptions& opt) {
  std::vector<std::string> args = {"dtsim", "run", sweep.experiment, "--out", (dir / p.id).string()};
  for (const auto& s : p.sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  args.insert(args.end(), opt.simgrid_args.begin(), opt.simgrid_args.end());
  const std::string log = (dir / "logs" / (p.id + ".log")).string();
  ChildOptions co;
  co.pipe = ChildOptions::Pipe::kNone;
  co.die_with_parent = true;  // and so do its own children: the death signal outlives exec
  return std::make_unique<ChildProcess>(
      [&](int) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0) return 1;
        return exec_self(args);
      },
      co);
}

// Runs `todo` with up to opt.jobs at once; returns the exit code of the first point that failed, or 0.
int run_points(const Sweep& sweep, const std::vector<const SweepPoint*>& todo, const fs::path& dir,
               const SweepOptions& opt, std::size_t done_before) {
  struct Running {
    const SweepPoint* point;
    std::unique_ptr<ChildProcess> child;
    std::chrono::steady_clock::time_point start;
  };
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  std::deque<const SweepPoint*> queue(todo.begin(), todo.end());
  std::vector<Running> running;
  std::size_t finished = 0;
  int failure = 0;
  const std::size_t total = todo.size();
  while ((!queue.empty() && failure == 0) || !running.empty()) {
    if (g_stop) return 130;  // the children go with their ChildProcess
    while (failure == 0 && !queue.empty() && static_cast<int>(running.size()) < opt.jobs) {
      running.push_back(
          {queue.front(), start_point(sweep, *queue.front(), dir, opt), std::chrono::steady_clock::now()});
      queue.pop_front();
    }
    bool changed = false;
    for (auto it = running.begin(); it != running.end();) {
      const std::optional<ChildExit> e = it->child->try_wait();
      if (!e) {
        ++it;
        continue;
      }
      ++finished;
      changed = true;
      const int code = e->exited() ? e->code() : 1;
      const std::string log = shown(dir / "logs" / (it->point->id + ".log")).string();
      if (code != 0) {
        std::cerr << "\nsweep: point " << it->point->id << " failed (exit " << code << "); its output: " << log << '\n';
        if (failure == 0) failure = code;
      }
      const double elapsed = since(t0);
      const double eta = elapsed / static_cast<double>(finished) * static_cast<double>(total - finished);
      std::fprintf(stderr, "[sweep %s] %zu/%zu points done (%s %.1f s), %zu running, %s elapsed, ETA %s\n",
                   sweep.name.c_str(), done_before + finished, done_before + total, it->point->id.c_str(),
                   since(it->start), running.size() - 1, duration(elapsed).c_str(),
                   finished == total ? "0 s" : duration(eta).c_str());
      it = running.erase(it);
    }
    if (!changed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return failure;
}

// Waits for the other shards of this mpirun job (each writes .shard-K-of-N with the job's name when its
// points are done). mpirun ends the whole job when one of them fails.
void wait_for_shards(const fs::path& dir, const Shard& shard) {
  for (int k = 0; k < shard.n; ++k) {
    const fs::path f = dir / (".shard-" + std::to_string(k) + "-of-" + std::to_string(shard.n));
    for (;;) {
      std::ifstream in(f);
      std::string job;
      if (in && std::getline(in, job) && job == shard.job) break;
      if (g_stop) throw std::runtime_error("interrupted");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

void write_shard_done(const fs::path& dir, const Shard& shard) {
  const fs::path f = dir / (".shard-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.n));
  std::ofstream(f.string() + ".tmp") << shard.job << '\n';
  fs::rename(f.string() + ".tmp", f);
}

// The sweep's plots (plots/sweep.py, matplotlib); a missing Python or matplotlib costs the plots only.
void plot(const Sweep& sweep, const fs::path& dir) {
  for (const SweepPlot& p : sweep.plots) {
    std::string name = "plot_" + p.y + "_vs_" + p.x + ".png";
    for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
    std::vector<std::string> args = {"python3",
                                     DTS_SOURCE_DIR "/plots/sweep.py",
                                     (dir / "table.csv").string(),
                                     "--x",
                                     p.x,
                                     "--y",
                                     p.y,
                                     "--out",
                                     (dir / name).string()};
    if (!p.series.empty()) {
      args.push_back("--series");
      args.push_back(p.series);
    }
    ChildOptions co;
    co.pipe = ChildOptions::Pipe::kNone;
    ChildProcess child(
        [&](int) {
          std::vector<char*> argv;
          for (auto& a : args) argv.push_back(a.data());
          argv.push_back(nullptr);
          execv("/usr/bin/python3", argv.data());  // Debian's, with python3-matplotlib (scripts/setup)
          execvp("python3", argv.data());
          return 127;
        },
        co);
    const ChildExit e = child.wait();
    if (e.exited() && e.code() == 0) {
      std::cout << "plot: " << shown(dir / name).string() << '\n';
    } else {
      std::cerr << "sweep: warning: no plot " << name << " (plots/sweep.py failed)\n";
    }
  }
}

void collate(const Sweep& sweep, const fs::path& dir) {
  std::cout << "sweep " << sweep.name << ": " << write_sweep_table(sweep, dir) << " rows -> "
            << shown(dir / "table.csv").string() << '\n';
  plot(sweep, dir);
}

}  // namespace

int run_sweep(const SweepOptions& opt) {
  if (opt.jobs < 1 || opt.jobs > 1024) throw InputError("--jobs", "expected 1 to 1024");
  const Sweep sweep = read_sweep(opt.file);
  const Shard shard = shard_of(opt);
  const fs::path dir =
      fs::absolute(opt.out.empty() ? fs::path("results") / sweep.name : fs::path(opt.out)).lexically_normal();
  const bool writer = shard.k == 0 || shard.job.empty();  // under mpirun, rank 0 prepares the directory

  if (opt.collate) {
    prepare_dir(sweep, dir, opt, false);
    if (!fs::exists(dir / kMarker)) throw InputError("--out " + echo(dir.string()), "holds no sweep to collate");
    const auto missing = missing_points(sweep, dir);
    if (!missing.empty())
      throw InputError(shown(dir).string(),
                       std::to_string(missing.size()) + " points are not done, the first " + missing.front());
    collate(sweep, dir);
    return 0;
  }
  // Every point's input, checked before anything runs (the simulator's own checks run in each point's run),
  // each data set read once.
  DataCache data;
  for (const auto& p : sweep.points) {
    try {
      load_experiment(sweep.experiment, p.sets, sim_reader(), &data);
    } catch (const InputError& e) {
      throw InputError(opt.file + ": point " + p.id, e.what());
    }
  }
  if (opt.check) {
    std::cout << "sweep " << sweep.name << ": ok, " << sweep.points.size() << " points of " << sweep.experiment << '\n';
    return 0;
  }
  if (writer) {
    prepare_dir(sweep, dir, opt, true);
  } else {
    while (!fs::exists(dir / kMarker) && !g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    prepare_dir(sweep, dir, opt, false);
  }

  std::vector<const SweepPoint*> todo;
  std::size_t done = 0;
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shard.n)) != shard.k) continue;
    if (holds_result(dir / sweep.points[i].id)) {
      ++done;
    } else {
      todo.push_back(&sweep.points[i]);
    }
  }
  if (done > 0) std::cerr << "sweep " << sweep.name << ": resuming, " << done << " points already done\n";
  if (const int code = run_points(sweep, todo, dir, opt, done); code != 0) return code;
  // A point killed with an earlier sweep may have been dying when its rerun looked for its partial directory.
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shard.n)) == shard.k)
      remove_stale_partials(dir / sweep.points[i].id);
  }
  if (shard.n > 1) {
    write_shard_done(dir, shard);
    if (shard.job.empty() || shard.k != 0) {
      std::cout << "sweep " << sweep.name << ": shard " << shard.k << "/" << shard.n << " done\n";
      return 0;
    }
    wait_for_shards(dir, shard);
  }
  const auto missing = missing_points(sweep, dir);
  if (!missing.empty()) throw std::runtime_error(std::to_string(missing.size()) + " points are not done");
  collate(sweep, dir);
  return 0;
}

}  // namespace dts::exp
