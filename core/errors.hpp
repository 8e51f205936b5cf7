// Error types shared by every layer (DESIGN.md §7, STYLE.md §8).
//   InputError  bad input: config key, platform, dataset file. main() returns 2, writes nothing.
//   CommError, KernelError  library or environment failure. main() returns 1.
//   DTS_ASSERT  broken invariant: aborts with a message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dts {

// Bad user input. `where` names the file and/or JSON path ("exp.json:/algorithm/lr").
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(where) {}
  const std::string& where() const { return where_; }

 private:
  std::string where_;
};

// Config-file errors are input errors named by JSON path.
using ConfigError = InputError;

// A user's value for a message: cut to about `max` bytes (at a UTF-8 boundary), "..." marking the cut.
inline std::string echo(const std::string& text, std::size_t max = 80) {
  if (text.size() <= max) return text;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // inside a UTF-8 character
  return text.substr(0, cut) + "...";
}

class CommError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KernelError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void assert_fail(const char* cond, const char* file, int line, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s: %s\n", file, line, cond, msg.c_str());
  std::abort();
}

}  // namespace dts

#define DTS_ASSERT(cond, msg)                                          \
  do {                                                                 \
    if (!(cond)) ::dts::assert_fail(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
