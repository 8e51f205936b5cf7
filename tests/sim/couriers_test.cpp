// Couriers (sim/couriers.hpp): while open, a job runs on an idle courier of its host instead of a new actor,
// the events of the run keep their order, and the run ends once the holders have released the couriers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/couriers.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;
using nlohmann::json;

namespace {

// Three senders on host 0 hand a job to a courier of host 0 at t = 0, 1 and 2 (sender 2 twice at t = 2); each
// job logs its start, sleeps `job_s` and logs its end; senders log right after handing it over. `holders`: 0
// for an actor per job (never opened), else each sender releases once after its last job. Returns the log
// (what happened, in order, at which time), the couriers' distinct pids, the end time and whether the engine
// saw a deadlock.
json run_jobs(int holders, double job_s) {
  return dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    const auto hosts = dts::sim::build_platform(dts::test::pinned_star(2, 1e9, 1e-4), 2);
    dts::sim::Couriers couriers;
    couriers.open(holders);
    json log = json::array();
    std::vector<long> pids;
    bool deadlock = false;
    sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
    const auto note = [&log](const std::string& what) { log.push_back({what, sg4::Engine::get_clock()}); };
    for (int k = 0; k < 3; ++k) {
      sg4::Actor::create("sender", hosts[0], [&, k] {
        sg4::this_actor::sleep_until(k);
        for (int j = 0; j < (k == 2 ? 2 : 1); ++j) {
          const std::string job = std::to_string(k) + "." + std::to_string(j);
          couriers.run(hosts[0], [&, job] {
            note("start " + job);
            if (std::find(pids.begin(), pids.end(), sg4::this_actor::get_pid()) == pids.end())
              pids.push_back(sg4::this_actor::get_pid());
            sg4::this_actor::sleep_for(job_s);
            note("end " + job);
          });
          note("handed " + job);
        }
        if (holders > 0) couriers.release();
      });
    }
    engine->run();
    return json{{"log", log}, {"couriers", pids.size()}, {"end_s", sg4::Engine::get_clock()}, {"deadlock", deadlock}};
  });
}

}  // namespace

TEST_CASE("Couriers reuse idle actors and keep the order of events") {
  const json fresh = run_jobs(0, 0.5);
  const json pooled = run_jobs(3, 0.5);
  CHECK(fresh["couriers"] == 4);
  CHECK(pooled["couriers"] == 2);  // jobs at 0 and 1 reuse one; at 2, two at once
  CHECK(pooled["log"] == fresh["log"]);
  CHECK(fresh["log"].size() == 12);
  CHECK(pooled["end_s"] == 2.5);
  CHECK_FALSE(pooled["deadlock"].get<bool>());
}

TEST_CASE("Couriers: a job still running at the last release ends the run") {
  // The senders release at 0, 1 and 2; the jobs of 2 end at 7.
  const json fresh = run_jobs(0, 5);
  const json pooled = run_jobs(3, 5);
  CHECK(pooled["log"] == fresh["log"]);
  CHECK(pooled["couriers"] == 4);  // every job overlaps another
  CHECK(pooled["end_s"] == 7.0);
  CHECK_FALSE(pooled["deadlock"].get<bool>());
}

TEST_CASE("Couriers left open look like a deadlock") {
  // The mutation the holders guard against: idle couriers that nobody releases.
  const json r = run_jobs(4, 0.5);  // one holder too many
  CHECK(r["deadlock"].get<bool>());
}
