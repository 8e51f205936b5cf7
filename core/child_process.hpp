// A function run in a forked child process, what it writes back through a pipe, and how it ended. For what must
// not run in dtsim's own process: a SimGrid engine (one per process, and SimGrid aborts or exits on some bad
// input), a measurement that needs fresh memory, a test that may crash.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dts {

struct ChildOptions {
  // What comes back through the pipe: nothing, what `body` writes to the descriptor it is given, or the child's
  // whole standard error (the descriptor `body` is given is then STDERR_FILENO).
  enum class Pipe { kNone, kFd, kStderr };
  Pipe pipe = Pipe::kFd;
  bool stdout_to_null = false;   // the child's standard output goes to /dev/null
  bool die_with_parent = false;  // PR_SET_PDEATHSIG: SIGKILL when the parent dies, even by SIGKILL
};

struct ChildExit {
  int status = 0;         // as waitpid gives it
  rusage usage{};         // the child's resources (ru_maxrss: its peak resident set, KiB)
  bool stopped = false;   // the caller's `stop` said so: the child was sent SIGTERM and reaped
  bool exited() const;    // by _exit or exit
  int code() const;       // the exit code, when exited()
  bool signaled() const;  // killed by a signal
  int signal() const;     // that signal, when signaled()
};

// One forked child. Destroying one that was not waited for kills it (SIGKILL) and reaps it.
class ChildProcess {
 public:
  // Flushes every stdio stream and forks. The child applies `opts`, runs `body` with the pipe's write end (-1
  // without a pipe), flushes stdio again and ends with _exit(what body returned), or _exit(1) if body threw:
  // the child is a copy of the caller, whose atexit handlers, destructors and stack must not run twice. With
  // die_with_parent, a child whose parent is already gone ends at once with _exit(1). Throws std::runtime_error
  // when the pipe or the fork fails.
  explicit ChildProcess(const std::function<int(int fd)>& body, const ChildOptions& opts = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Reads the pipe until the child closes it (it ends), handing over each chunk as it comes.
  void read(const std::function<void(std::string_view chunk)>& sink);
  std::string read_all();
  // Waits for the child to end. A wait interrupted by a signal resumes, unless `stop` (if given) then returns
  // true: the child is sent SIGTERM and reaped, and the result says stopped. Throws std::runtime_error when
  // there is no child to wait for.
  ChildExit wait(const std::function<bool()>& stop = nullptr);
  // Does not block: how the child ended, or nothing while it runs. Once it returned a result, not again.
  std::optional<ChildExit> try_wait();

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool reaped_ = false;
};

// In a ChildProcess body: replaces the child by this program (/proc/self/exe) run with `args` (args[0] is the
// program's name). Returns 1, the body's exit code, only if exec failed.
int exec_self(std::vector<std::string> args);

}  // namespace dts
