// LoadProbe (how busy the shared machine was during a window) and capture() (a peer script's output).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "experiments/bench/bench.hpp"

namespace dts::bench {
namespace {

double wall_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double self_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return s(u.ru_utime) + s(u.ru_stime);
}
// First line of /proc/stat: total and idle (+ iowait) jiffies over all CPUs.
void proc_stat(unsigned long long& total, unsigned long long& idle) {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  total = idle = 0;
  for (int i = 0; i < 10; ++i) {
    unsigned long long v = 0;
    if (!(in >> v)) break;
    total += v;
    if (i == 3 || i == 4) idle += v;
  }
}

}  // namespace

LoadProbe::LoadProbe() : t0_s_(wall_s()), self0_s_(self_cpu_s()) { proc_stat(total0_, idle0_); }

double LoadProbe::other_busy_cores() const {
  unsigned long long total = 0, idle = 0;
  proc_stat(total, idle);
  const double dt = wall_s() - t0_s_;
  const auto d_total = static_cast<double>(total - total0_), d_idle = static_cast<double>(idle - idle0_);
  if (d_total <= 0 || dt <= 0) return 0;
  const double busy = (d_total - d_idle) / d_total * cpus();
  const double mine = (self_cpu_s() - self0_s_) / dt;
  return busy > mine ? busy - mine : 0.0;
}

int LoadProbe::cpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

bool uncontended(double other_busy_cores, int threads) { return other_busy_cores < LoadProbe::cpus() - threads + 0.2; }

std::string capture(const std::string& command, int& code) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    code = -1;
    return out;
  }
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  const int status = pclose(pipe);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace dts::bench
