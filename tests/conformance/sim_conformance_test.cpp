// The Comm conformance suite (comm_conformance.hpp) on the simulator: every case on a 4-host star, each in
// its own SimGrid engine (a forked child), checked by the same checker as on MPI; the plan cases also at the
// collective fidelity, where the collective engine runs them.
#include <catch2/catch.hpp>

#include "tests/conformance/comm_conformance.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

void run_cases(const std::vector<dts::conformance::Case>& cases, dts::sim::Fidelity fidelity) {
  using dts::conformance::kRanks;
  for (const auto& c : cases) {
    INFO(c.name << ": " << c.what);
    const auto out = dts::test::simulate(
        dts::test::pinned_star(kRanks, 8e9, 10e-6), kRanks,
        [&](auto& comm, auto& node, auto& facts) { c.body(comm, node, facts); }, fidelity);
    REQUIRE_FALSE(out.contains("error"));
    INFO("facts: " << out["rank"].dump());
    CHECK(c.check(out["rank"]).empty());
  }
}

}  // namespace

TEST_CASE("conformance: sim::SimComm passes the Comm conformance suite", "[conformance][sim]") {
  run_cases(dts::conformance::cases(), dts::sim::Fidelity::kMessage);
}

TEST_CASE("conformance: the plan cases at the collective fidelity", "[conformance][sim]") {
  run_cases(dts::conformance::detail::plan_cases(), dts::sim::Fidelity::kCollective);
}
