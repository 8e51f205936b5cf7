// ChildProcess: what comes back through the pipe (a descriptor, or the whole stderr), the exit code, an
// exception or a signal in the child, a wait stopped by the caller, and a child that dies with its parent.
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/child_process.hpp"

namespace dts {
namespace {

void write_text(int fd, const std::string& s) {
  REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
}

TEST_CASE("ChildProcess: what the body writes to its descriptor, and the code it returns", "[core][child]") {
  ChildProcess child([](int fd) {
    write_text(fd, "hello ");
    write_text(fd, "parent");
    return 3;
  });
  CHECK(child.read_all() == "hello parent");
  const ChildExit e = child.wait();
  REQUIRE(e.exited());
  CHECK(e.code() == 3);
  CHECK_FALSE(e.stopped);
}

TEST_CASE("ChildProcess::try_wait: nothing while the child runs, then how it ended", "[core][child]") {
  ChildOptions opts;
  opts.pipe = ChildOptions::Pipe::kNone;
  ChildProcess child(
      [](int) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        return 4;
      },
      opts);
  REQUIRE_FALSE(child.try_wait().has_value());
  std::optional<ChildExit> e;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(e = child.try_wait()) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(e.has_value());
  REQUIRE(e->exited());
  CHECK(e->code() == 4);
}

TEST_CASE("ChildProcess: the child's whole stderr, its stdout discarded", "[core][child]") {
  ChildOptions opts;
  opts.pipe = ChildOptions::Pipe::kStderr;
  opts.stdout_to_null = true;
  ChildProcess child(
      [](int fd) {
        std::printf("to stdout\n");
        std::fprintf(stderr, "to stderr ");
        write_text(fd, "and to the descriptor");
        return 0;
      },
      opts);
  std::string got;
  child.read([&](std::string_view chunk) { got += chunk; });
  CHECK(got == "to stderr and to the descriptor");
  CHECK(child.wait().code() == 0);
}

TEST_CASE("ChildProcess: an exception ends the child with code 1, a signal is reported as such", "[core][child]") {
  ChildOptions opts;
  opts.pipe = ChildOptions::Pipe::kNone;
  ChildProcess throws([](int fd) -> int { throw std::runtime_error("fd " + std::to_string(fd)); }, opts);
  const ChildExit thrown = throws.wait();
  REQUIRE(thrown.exited());
  CHECK(thrown.code() == 1);

  ChildProcess killed([](int) { return std::raise(SIGTERM); }, opts);
  const ChildExit e = killed.wait();
  CHECK_FALSE(e.exited());
  REQUIRE(e.signaled());
  CHECK(e.signal() == SIGTERM);
}

volatile std::sig_atomic_t g_alarm = 0;
extern "C" void on_alarm(int) { g_alarm = 1; }

TEST_CASE("ChildProcess::wait: a signal and the caller's stop end the child with SIGTERM", "[core][child]") {
  struct sigaction sa {};
  struct sigaction old {};
  sa.sa_handler = on_alarm;  // no SA_RESTART: the wait is interrupted
  sigaction(SIGALRM, &sa, &old);
  g_alarm = 0;
  ChildProcess child([](int) { return static_cast<int>(sleep(60)); });
  itimerval every_100ms{};  // again and again, in case the first comes before the wait
  every_100ms.it_value.tv_usec = every_100ms.it_interval.tv_usec = 100000;
  setitimer(ITIMER_REAL, &every_100ms, nullptr);
  int asked = 0;
  const ChildExit e = child.wait([&] {
    ++asked;
    return g_alarm != 0;
  });
  const itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  sigaction(SIGALRM, &old, nullptr);
  CHECK(asked >= 1);
  CHECK(e.stopped);
  REQUIRE(e.signaled());
  CHECK(e.signal() == SIGTERM);
}

// Whether process `pid` is gone or a zombie (dead, not yet reaped by its new parent).
bool dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && (text[close + 2] == 'Z' || text[close + 2] == 'X');
}

TEST_CASE("ChildProcess: with die_with_parent, a child dies with its parent", "[core][child]") {
  // A middle process starts the child, sends back its pid, and exits without waiting for it.
  ChildProcess middle([](int fd) {
    ChildOptions opts;
    opts.pipe = ChildOptions::Pipe::kNone;
    opts.die_with_parent = true;
    auto* child = new ChildProcess([](int) { return static_cast<int>(sleep(60)); }, opts);  // never destroyed
    const pid_t pid = child->pid();
    if (::write(fd, &pid, sizeof pid) != sizeof pid) return 1;
    return 0;  // _exit: the child is not killed by a destructor, only by its parent's death
  });
  const std::string bytes = middle.read_all();
  REQUIRE(bytes.size() == sizeof(pid_t));
  pid_t pid = 0;
  std::memcpy(&pid, bytes.data(), sizeof pid);
  CHECK(middle.wait().code() == 0);
  for (int i = 0; i < 200 && !dead(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(dead(pid));
}

}  // namespace
}  // namespace dts
