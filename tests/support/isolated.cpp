// Fork, run, send the JSON result back through a pipe.
#include "tests/support/isolated.hpp"

#include <unistd.h>

#include <stdexcept>
#include <string>

#include "core/child_process.hpp"

namespace dts::test {

nlohmann::json run_isolated(const std::function<nlohmann::json()>& fn) {
  ChildProcess child([&](int fd) {
    std::string out;
    try {
      out = fn().dump();
    } catch (const std::exception& e) {
      out = nlohmann::json{{"error", e.what()}}.dump();
    }
    std::size_t off = 0;
    while (off < out.size()) {
      const ssize_t n = write(fd, out.data() + off, out.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    return 0;
  });
  const std::string text = child.read_all();
  const ChildExit e = child.wait();
  if (!e.exited() || e.code() != 0 || text.empty()) {
    throw std::runtime_error("the isolated child crashed (status " + std::to_string(e.status) + ")");
  }
  return nlohmann::json::parse(text);
}

}  // namespace dts::test
