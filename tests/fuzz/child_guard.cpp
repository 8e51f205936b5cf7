// Linked (with -Wl,--wrap=fork) into the targets that run dtsim's pre-run check (sim/preflight.cpp), which
// loads a platform into SimGrid in a forked child. In a fuzz target that child is a copy of the fuzzer,
// libFuzzer's signal handlers and death callback included, so that a sanitizer report in the child is
// written as a crash file (scripts/fuzz counts those) while the check goes on. This wrapper makes each child
// of our code also:
//   - print sanitizer reports where the fuzzer prints, not into the check's pipe (which keeps SimGrid's
//     complaints only);
//   - die of SIGABRT quietly: SimGrid aborts on some bad files (xbt_die), and the check reports that as bad
//     input, which is what it is for;
//   - report a hang: after kChildSeconds it prints so and traps, and libFuzzer writes the input;
//   - take at most kChildMemory bytes more than the fuzzer had (RLIMIT_DATA over the data already mapped,
//     ASan's shadow included): past it ASan reports "out of memory", and libFuzzer writes the input. A
//     platform of 10^8 hosts would otherwise take the machine's memory;
//   - die with the fuzzer (PR_SET_PDEATHSIG), which libFuzzer's own -timeout may end.
#include <sanitizer/common_interface_defs.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

constexpr unsigned kChildSeconds = 20;            // below scripts/fuzz's -timeout=30
constexpr rlim_t kChildMemory = rlim_t{2} << 30;  // 2 GiB

rlim_t data_mapped_bytes() {
  std::ifstream in("/proc/self/status");
  for (std::string key; in >> key;) {
    if (key == "VmData:") {
      rlim_t kib = 0;
      in >> kib;
      return kib << 10;
    }
  }
  return 0;
}

int report_fd = STDERR_FILENO;  // the fuzzer's stderr, kept before the check redirects the child's

void on_hang(int) {
  static const char msg[] = "dts fuzz: the pre-run check's child hung (20 s)\n";
  (void)!write(report_fd, msg, sizeof msg - 1);
  __builtin_trap();
}

}  // namespace

extern "C" pid_t __real_fork();

extern "C" pid_t __wrap_fork() {
  const pid_t pid = __real_fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  report_fd = dup(STDERR_FILENO);
  __sanitizer_set_report_fd(reinterpret_cast<void*>(static_cast<std::intptr_t>(report_fd)));
  std::signal(SIGABRT, SIG_DFL);
  std::signal(SIGALRM, on_hang);
  alarm(kChildSeconds);
  const rlim_t cap = data_mapped_bytes() + kChildMemory;
  const rlimit limit{cap, cap};
  setrlimit(RLIMIT_DATA, &limit);
  return 0;
}
