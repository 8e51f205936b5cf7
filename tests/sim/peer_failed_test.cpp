// A peer that is gone (SimWorld::fail): what its peers' receives and sends complete with.
#include <catch2/catch.hpp>

#include "tests/sim/sim_harness.hpp"

using dts::Status;
using dts::Vec;

TEST_CASE("sim::SimWorld: operations with a failed peer complete with kPeerFailed", "[sim]") {
  /* In details:
   *   o rank 1 sends one message (tag 1) to rank 0, sleeps 1 s, then fails; rank 2 sends one (tag 4) after 2 s.
   *   o rank 0, meanwhile, waits in wait_any on a receive from rank 1 that rank 1 never sends (tag 2).
   * Expectations
   *   o the pending receive completes at the failure (1 s) with kPeerFailed, naming rank 1;
   *   o the message rank 1 sent before failing is still received; a later receive from rank 1 fails at once,
   *     so does a receive from {1, 2} (its owner learns of the failure and posts again without rank 1), and
   *     a send to rank 1; the receive from {2} then gets rank 2's message.
   */
  const auto out = dts::test::simulate(dts::test::pinned_star(3, 8e9, 10e-6), 3, [](auto& comm, auto& node, auto& o) {
    Vec one(1, true);
    if (comm.rank() == 1) {
      comm.send(0, 1, one);
      node.sleep_for(1.0);
      comm.fail();
    } else if (comm.rank() == 2) {
      node.sleep_for(2.0);
      comm.send(0, 4, one);
    } else {
      std::vector<dts::Request> reqs;
      reqs.push_back(comm.irecv(1, 2, one));
      const auto c = comm.wait_any(reqs);
      o["pending"] = {to_string(c.status), c.source, comm.now_s()};
      o["before"] = to_string(comm.irecv(1, 1, one).wait());
      auto later = comm.irecv(1, 3, one);
      o["later"] = to_string(later.wait());
      const std::vector<dts::Rank> both = {1, 2}, two = {2};
      auto any = comm.irecv_any(both, 4, one);
      o["any"] = {to_string(any.wait()), any.source()};
      o["send"] = to_string(comm.isend(1, 5, one).wait());
      auto rest = comm.irecv_any(two, 4, one);
      o["rest"] = {to_string(rest.wait()), rest.source()};
    }
  });
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  const auto& r0 = out["rank"][0];
  REQUIRE(r0["pending"][0] == "peer failed");
  REQUIRE(r0["pending"][1] == 1);
  REQUIRE(r0["pending"][2].get<double>() == Approx(1.0 + 2 * 10e-6 + 4 / 1e9).epsilon(1e-6));
  REQUIRE(r0["before"] == "ok");
  REQUIRE(r0["later"] == "peer failed");
  REQUIRE(r0["any"] == nlohmann::json({"peer failed", 1}));
  REQUIRE(r0["send"] == "peer failed");
  REQUIRE(r0["rest"] == nlohmann::json({"ok", 2}));
}
