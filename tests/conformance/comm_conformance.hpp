// One conformance suite for the seam's Comm and Node, written once and run on every backend (as Gloo
// parameterizes its tests over transports): tests/conformance/sim_conformance_test.cpp runs it in the
// simulator, tests/realexec/mpi_conformance_main.cpp under mpirun -np 4. Each case runs a body on every
// rank, which records what it observed as JSON facts (never a time: only facts both backends must agree
// on), and a checker that is the same for all backends verifies every rank's facts.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/node.hpp"

namespace dts::conformance {

inline constexpr int kRanks = 4;  // every case runs on exactly 4 ranks

struct Case {
  std::string name;
  std::string what;  // the behaviour it pins down
  std::function<void(Comm& comm, Node& node, nlohmann::json& facts)> body;
  // facts[r] is rank r's object. Returns "" when they conform, else what is wrong. A copy: a fact that a rank
  // never recorded reads as null (a const object's missing key would be undefined behaviour, a crash).
  std::function<std::string(nlohmann::json facts)> check;
};

const std::vector<Case>& cases();

namespace detail {
std::vector<Case> matching_cases();  // comm_conformance.cpp
std::vector<Case> transfer_cases();  // comm_conformance_transfer.cpp
std::vector<Case> round_cases();     // comm_conformance_rounds.cpp
std::vector<Case> wait_cases();      // comm_conformance_waits.cpp
std::vector<Case> plan_cases();      // comm_conformance_plans.cpp
// Collects the first failed expectation.
struct Expect {
  std::string failure;
  void operator()(bool ok, const std::string& what) {
    if (!ok && failure.empty()) failure = what;
  }
};
}  // namespace detail

}  // namespace dts::conformance
