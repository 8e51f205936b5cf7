#include "tests/fuzz/xml_platform.hpp"

#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "algorithms/api/errors.hpp"
#include "sim/platform.hpp"

namespace dts::fuzz {
namespace {

enum ExitCode { kLoadedCode = 0, kInputErrorCode = 2, kOtherErrorCode = 3, kSanitizerCode = 42 };

[[noreturn]] void child_load(const std::filesystem::path& xml, unsigned timeout_s) {
  // The child dies of its own signals, not through libFuzzer's handlers (which would report the input as the
  // parent's crash); a sanitizer report ends it with its own code.
  for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) std::signal(sig, SIG_DFL);
  __sanitizer_set_death_callback([] { _exit(kSanitizerCode); });
  alarm(timeout_s);
  int code = kLoadedCode;
  try {
    sim::PlatformSpec spec;
    spec.name = "fuzz";
    spec.topology = "xml";
    spec.xml_file = xml.string();
    spec.origin = xml.string() + ":";
    sim::build_platform(spec, 1);
  } catch (const InputError&) {
    code = kInputErrorCode;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    code = kOtherErrorCode;
  }
  std::fflush(nullptr);
  _exit(code);
}

XmlLoad::Outcome outcome_of(int status) {
  using Outcome = XmlLoad::Outcome;
  if (WIFSIGNALED(status)) {
    return WTERMSIG(status) == SIGABRT   ? Outcome::kAborted
           : WTERMSIG(status) == SIGALRM ? Outcome::kHung
                                         : Outcome::kUnknown;
  }
  switch (WEXITSTATUS(status)) {
    case kLoadedCode:
      return Outcome::kLoaded;
    case kInputErrorCode:
      return Outcome::kInputError;
    case kOtherErrorCode:
      return Outcome::kOtherError;
    case kSanitizerCode:
      return Outcome::kSanitizerError;
    default:
      return Outcome::kUnknown;
  }
}

}  // namespace

void make_engine() {
  if (simgrid::s4u::Engine::is_initialized()) return;
  static int argc = 1;
  static char name[] = "dtsim";
  static char* argv[] = {name, nullptr};
  new simgrid::s4u::Engine(&argc, argv);  // for the process's lifetime, as in dtsim
}

XmlLoad load_platform_xml_isolated(const std::filesystem::path& xml, unsigned timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("dts fuzz: pipe");
    std::abort();
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("dts fuzz: fork");
    std::abort();
  }
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    dup2(open("/dev/null", O_WRONLY), STDOUT_FILENO);
    child_load(xml, timeout_s);
  }
  close(fds[1]);
  XmlLoad r;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n > 0) r.output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, &r.status, 0) < 0) {
  }
  r.outcome = outcome_of(r.status);
  return r;
}

}  // namespace dts::fuzz
