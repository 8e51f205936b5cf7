// The simulation driver. An exception in any rank (bad input discovered late, a broken invariant turned
// into an exception) stops every actor and is rethrown to the caller after the engine returns.
#include "sim/launcher.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <exception>
#include <iomanip>
#include <optional>
#include <sstream>

#include <simgrid/version.h>

#include "algorithms/api/wait_log.hpp"
#include "sim/actor_stack.hpp"
#include "sim/link_load.hpp"
#include "sim/message_costs.hpp"
#include "sim/scenario_sim.hpp"
#include "sim/sim_comm.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

std::vector<std::string> engine_args(const std::vector<std::string>& simgrid_args) {
  std::vector<std::string> args = {"dtsim", "--log=xbt_cfg.thres:warning"};
  // No guard pages: sim/ starts every actor with a stack sized for it (sim/actor_stack.hpp).
  args.emplace_back("--cfg=contexts/guard-size:0");
  args.insert(args.end(), simgrid_args.begin(), simgrid_args.end());
  return args;
}

void raise_stack_limit() {
  // The main stack grows on demand up to the soft limit read at each fault (the kernel keeps at least 128 MiB
  // below it free, more when the limit was high at exec).
  rlimit stack{};
  if (getrlimit(RLIMIT_STACK, &stack) != 0) return;
  const rlim_t want = rlim_t{512} << 20;
  const rlim_t cap = stack.rlim_max == RLIM_INFINITY ? want : std::min(want, stack.rlim_max);
  if (stack.rlim_cur != RLIM_INFINITY && stack.rlim_cur < cap) {
    stack.rlim_cur = cap;
    setrlimit(RLIMIT_STACK, &stack);
  }
}

SimOutcome run_simulation(const SimJob& job) {
  // For glibc's malloc (a build without jemalloc; sanitizers): actors' stacks are calloc'ed
  // (sim/actor_stack.hpp), and glibc would give the heap of thousands of freed stacks back to the kernel at once
  // and fault it in, page by zeroed page, at the next step's sends (a fifth of the run at 4096 workers): keep
  // it, and keep the mmap threshold from creeping up to the stacks' size. jemalloc ignores these
  // (experiments/jemalloc_conf.cpp keeps its freed pages).
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  raise_stack_limit();
  std::vector<std::string> args = engine_args(job.simgrid_args);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());

  check_message_costs_fidelity(job.platform, job.fidelity == Fidelity::kCollective);
  const std::vector<sg4::Host*> hosts = build_platform(job.platform, job.ranks, job.workers);
  TimeAccount account;
  account.set_sink(job.spans);
  MessageCosts costs(job.platform, job.seed);
  SimWorld world(hosts, &account, costs.active() ? &costs : nullptr);
  std::optional<LinkLoadProbe> link_load;
  if (job.spans != nullptr) link_load.emplace(*job.spans);
  std::unique_ptr<CollectiveSim> collectives;
  if (job.fidelity == Fidelity::kCollective) collectives = std::make_unique<CollectiveSim>(world, job.rings, job.lines);
  std::vector<WaitLog> waits(static_cast<std::size_t>(job.ranks));
  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });

  // An exception out of rank r's actor or one of its activities stops the run; the first one is reported, after
  // the engine returns (formatting it on an activity's small stack, just after the unwinding, trips ASan).
  struct Stopped {
    Rank rank = -1;
    double at_s = 0;
    std::exception_ptr error;
  };
  std::optional<Stopped> stopped;
  const auto stop = [&stopped](Rank r, const std::exception_ptr& e) {
    if (!stopped) stopped = Stopped{r, sg4::Engine::get_clock(), e};
    sg4::Actor::kill_all();
  };
  world.couriers().open(job.ranks);  // reused until every rank has ended
  for (Rank r = 0; r < job.ranks; ++r) {
    sg4::Host* host = hosts[static_cast<std::size_t>(r)];
    start_actor("rank-" + std::to_string(r), host, job.rank_stack_kib, [&, r, host] {
      const TimeAccount::ActorScope accounted(&account, r);
      try {
        SimComm comm(world, r, collectives.get());
        comm.set_wait_log(&waits[static_cast<std::size_t>(r)]);
        SimNode node(host, &account, [&stop, r](const std::exception_ptr& e) { stop(r, e); });
        auto compute = job.make_compute(r, host, &account, world.wires());
        auto recorder = job.make_recorder(comm);
        Context ctx{comm, *compute, node, *recorder, job.workers, job.steps};
        enter_run(ctx, &job.scenario);
        job.main(ctx);
      } catch (const RankGone&) {
        // this rank failed (the scenario's failures): it ends here
      } catch (const simgrid::ForcefulKillException&) {
        throw;  // SimGrid unwinds killed actors with this; it must pass through
      } catch (...) {
        stop(r, std::current_exception());
      }
      if (!stopped) world.couriers().release();
    });
  }
  const std::unique_ptr<LinkWindows> windows = start_scenario(job.scenario, world, hosts);
  engine.run();
  if (stopped) {
    try {
      std::rethrow_exception(stopped->error);
    } catch (const PeerFailed& p) {  // where and when the run stops
      std::ostringstream what;
      what << "the run stopped at simulated time " << std::setprecision(9) << stopped->at_s << " s: rank "
           << stopped->rank << ": " << p.what();
      throw CommError(what.str());
    }
  }
  if (deadlock) throw CommError("the simulation deadlocked: some ranks wait for messages nobody sends");
  SimOutcome out{sg4::Engine::get_clock(), world.messages_sent(), {}, {}, account.actors(sg4::Engine::get_clock()), {}};
  for (Rank r = 0; r < job.ranks; ++r) {
    out.bytes_sent.push_back(world.bytes_sent(r));
    out.bytes_received.push_back(world.bytes_received(r));
    out.waited_on.push_back(waits[static_cast<std::size_t>(r)].waited_on());
  }
  return out;
}

}  // namespace dts::sim

namespace dts::sim {
std::string simgrid_version() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}
}  // namespace dts::sim
