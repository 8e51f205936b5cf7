// Runs a function in a forked child process and returns what it returned, as JSON. SimGrid allows one
// engine per process, so every simulation in a test runs isolated; the parent makes the assertions.
// The child's exceptions come back as {"error": what}; a crash fails the test in the parent.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

namespace dts::test {

nlohmann::json run_isolated(const std::function<nlohmann::json()>& fn);

}  // namespace dts::test
