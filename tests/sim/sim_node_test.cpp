// SimNode: a spawned activity runs concurrently on the rank's host in simulated time, shares the rank's
// Comm (with its own tags) and state behind the api's mutex, and can be joined.
#include <catch2/catch.hpp>

#include <mutex>

#include "tests/sim/sim_harness.hpp"

TEST_CASE("sim::SimNode: a spawned activity serves messages while the rank sleeps", "[sim]") {
  /* In details:
   *   o rank 1 spawns a server activity that receives 3 messages (tag 1) and adds them to a shared sum
   *     under the mutex, while rank 1's main activity sleeps 1 s, then joins the server
   *   o rank 0 sleeps 0.1 s before each send; a blocking send returns on delivery, 2 us + 4 ns later
   * Expectations
   *   o the server finished before the main activity woke: the sum is complete at t = 1 and the join
   *     returns at once
   */
  const auto out = dts::test::simulate(dts::test::pinned_star(2, 8e9, 1e-6), 2, [](auto& comm, auto& node, auto& o) {
    if (comm.rank() == 0) {
      for (int i = 1; i <= 3; ++i) {
        node.sleep_for(0.1);
        std::vector<float> v = {static_cast<float>(i)};
        comm.send(1, 1, std::span<const float>(v));
      }
      return;
    }
    auto mutex = node.make_mutex();
    float sum = 0;
    double served_at = 0;
    auto server = node.spawn("server", [&] {
      std::vector<float> v(1);
      for (int i = 0; i < 3; ++i) {
        comm.recv(0, 1, std::span<float>(v));
        std::lock_guard<dts::Mutex> lock(*mutex);
        sum += v[0];
      }
      served_at = comm.now_s();
    });
    node.sleep_for(1.0);
    {
      std::lock_guard<dts::Mutex> lock(*mutex);
      o["sum_at_wake"] = sum;
    }
    server->join();
    o["served_at"] = served_at;
    o["joined_at"] = comm.now_s();
  });
  REQUIRE(!out.contains("error"));
  const auto& r1 = out["rank"][1];
  REQUIRE(r1["sum_at_wake"] == 6.0);
  REQUIRE(r1["served_at"].get<double>() == Approx(0.3 + 3 * (2e-6 + 4e-9)).epsilon(1e-9));
  REQUIRE(r1["joined_at"].get<double>() == Approx(1.0));
}
