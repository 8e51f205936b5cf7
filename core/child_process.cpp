// ChildProcess: fork, pipe, wait.
#include "core/child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace dts {
namespace {

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string(what) + " failed: " + std::strerror(errno));
}

// In the child: everything before `body`. False when the child must end at once.
bool set_up_child(const ChildOptions& opts, pid_t parent, int fds[2]) {
  if (opts.die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)) return false;
  if (opts.pipe != ChildOptions::Pipe::kNone) close(fds[0]);
  if (opts.pipe == ChildOptions::Pipe::kStderr) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[1]);
    fds[1] = STDERR_FILENO;
  }
  if (opts.stdout_to_null) {
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) {
      dup2(null, STDOUT_FILENO);
      if (null != STDOUT_FILENO) close(null);
    }
  }
  return true;
}

}  // namespace

bool ChildExit::exited() const { return WIFEXITED(status); }
int ChildExit::code() const { return WEXITSTATUS(status); }
bool ChildExit::signaled() const { return WIFSIGNALED(status); }
int ChildExit::signal() const { return WTERMSIG(status); }

ChildProcess::ChildProcess(const std::function<int(int fd)>& body, const ChildOptions& opts) {
  int fds[2] = {-1, -1};
  if (opts.pipe != ChildOptions::Pipe::kNone && pipe(fds) != 0) fail("pipe");
  std::fflush(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    const int err = errno;
    if (fds[0] >= 0) close(fds[0]), close(fds[1]);
    errno = err;
    fail("fork");
  }
  if (pid_ == 0) {
    int code = 1;
    if (set_up_child(opts, parent, fds)) {
      try {
        code = body(fds[1]);
      } catch (...) {
        code = 1;
      }
    }
    std::fflush(nullptr);
    _exit(code);
  }
  if (fds[1] >= 0) close(fds[1]);
  read_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (read_fd_ >= 0) close(read_fd_);
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

void ChildProcess::read(const std::function<void(std::string_view chunk)>& sink) {
  if (read_fd_ < 0) return;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(read_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sink(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  close(read_fd_);
  read_fd_ = -1;
}

std::string ChildProcess::read_all() {
  std::string out;
  read([&out](std::string_view chunk) { out += chunk; });
  return out;
}

ChildExit ChildProcess::wait(const std::function<bool()>& stop) {
  ChildExit e;
  while (wait4(pid_, &e.status, 0, &e.usage) < 0) {
    if (errno != EINTR) fail("waitpid");
    if (stop && stop()) {
      kill(pid_, SIGTERM);
      while (wait4(pid_, &e.status, 0, &e.usage) < 0 && errno == EINTR) {
      }
      e.stopped = true;
      break;
    }
  }
  reaped_ = true;
  return e;
}

std::optional<ChildExit> ChildProcess::try_wait() {
  ChildExit e;
  pid_t got = 0;
  while ((got = wait4(pid_, &e.status, WNOHANG, &e.usage)) < 0) {
    if (errno != EINTR) fail("waitpid");
  }
  if (got == 0) return std::nullopt;  // still running
  reaped_ = true;
  return e;
}

int exec_self(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  return 1;
}

}  // namespace dts
