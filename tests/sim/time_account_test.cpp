// The time account (sim/time_account.hpp): transfers classified by their endpoints' hosts, conservation of
// every actor's time, and breakdowns that react as papers/easgd_hpc.md §5.6 says (Sync EASGD3 hides the
// GPU-GPU exchange behind the F/B; only Sync EASGD1 moves parameters between CPU and GPU).
// Platform: one node, a CPU and 4 devices under one PCIe switch, 12 GB/s and 1 us per PCIe link, CM02
// without cross-traffic (every factor 1).
#include <catch2/catch.hpp>
#include <cmath>

#include "algorithms/algorithm.hpp"
#include "sim/launcher.hpp"
#include "sim/sim_comm.hpp"
#include "sim/sim_compute.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace sg4 = simgrid::s4u;
using dts::sim::TimeCategory;
using nlohmann::json;

namespace {

constexpr double kLinkBps = 96e9, kLinkLatencyS = 1e-6;

dts::sim::PlatformSpec node_platform() {
  const json j = {{"device", {{"peak_flops", 7e12}, {"mem_bw_Bps", 2.88e11}, {"efficiency", 0.5}}},
                  {"node",
                   {{"cpu", {{"peak_flops", 9.6e11}, {"mem_bw_Bps", 6.8e10}, {"efficiency", 0.5}}},
                    {"devices", 4},
                    {"pcie_switches", 1},
                    {"pcie_bandwidth_bps", kLinkBps},
                    {"pcie_latency_s", kLinkLatencyS}}},
                  {"hosts", 1},
                  {"network_model", "CM02"},
                  {"simgrid_config", {{"network/crosstraffic", "0"}}}};
  return dts::sim::read_platform(j, "p.json", "", ".");
}

std::size_t at(TimeCategory c) { return static_cast<std::size_t>(c); }

json to_json(const std::vector<dts::sim::ActorTimes>& actors) {
  json out = json::array();
  for (const auto& a : actors) {
    out.push_back(
        {{"rank", a.rank}, {"main", a.main}, {"start", a.start_s}, {"end", a.end_s}, {"own", a.own}, {"path", a.path}});
  }
  return out;
}

// A registered algorithm with P = 4 workers on the node, modeled LeNet numerics (431,080 parameters, fp32),
// F/B step_time_s, batches of 64 Mnist-shaped samples copied from the CPU. Returns the actors and the
// run's view (the path of the rank that ends last).
json run_algorithm(const std::string& algorithm, json config, std::int64_t steps, double step_time_s,
                   dts::sim::Fidelity fidelity = dts::sim::Fidelity::kMessage) {
  return dts::test::run_isolated([&] {
    const dts::AlgorithmSpec& spec = dts::find_algorithm(algorithm, "test");
    dts::ConfigReader reader(config, "test", "/algorithm");
    dts::data::Dataset mnist{"mnist", 60000, 1, 28, 28, 10, {}, {}};
    dts::sim::ModelSetup setup;
    setup.trainer.network = "lenet";
    setup.trainer.real = false;
    setup.trainer.train = &mnist;
    setup.trainer.batch = 64;
    setup.step_time_s = step_time_s;
    dts::sim::SimJob job;
    job.platform = node_platform();
    job.workers = setup.trainer.workers = 4;
    job.ranks = spec.ranks(reader, job.workers);
    setup.trainer.first_worker_rank = job.ranks - job.workers;
    job.steps = steps;
    job.fidelity = fidelity;
    job.main = spec.configure(reader, job.workers);
    reader.finish();
    dts::test::use_sim_compute(job, setup);
    const auto outcome = dts::sim::run_simulation(job);
    json out = {{"end_s", outcome.simulated_time_s}, {"actors", to_json(outcome.actor_times)}};
    const dts::sim::ActorTimes* last = nullptr;
    for (const auto& a : outcome.actor_times) {
      if (a.main && (last == nullptr || a.end_s > last->end_s)) last = &a;
    }
    out["run"] = last->path;
    return out;
  });
}

}  // namespace

TEST_CASE("sim::TimeAccount: a transfer is CPU-GPU or GPU-GPU by its endpoints, and paths follow senders", "[sim]") {
  /* In details:
   *   o rank 0 on the CPU, ranks 1 and 2 on devices 0 and 1 (same switch); S = 12 MB
   *   o rank 0 sends S to rank 1; once it has it, rank 1 sends S to rank 2; ranks 1 and 2 wait from t = 0
   * Expectations
   *   o one transfer t = 2 x 1 us + S / 12 GB/s, CPU -> device (uplink + device link) or device -> device
   *     (two device links) alike
   *   o rank 1 own: t of CPU-GPU parameter; rank 2 own: t idle, then t of GPU-GPU parameter
   *   o rank 2 path (critical path): t of CPU-GPU, then t of GPU-GPU: it goes through rank 1's receive
   */
  const double S = 12e6, t = 2 * kLinkLatencyS + S / (kLinkBps / 8);
  const json out = dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    const auto hosts = dts::sim::build_platform(node_platform(), 3, 2);
    dts::sim::TimeAccount account;
    dts::sim::SimWorld world(hosts, &account);
    const dts::SendOptions opts{static_cast<std::uint64_t>(S)};
    for (int r = 0; r < 3; ++r) {
      sg4::Actor::create("rank", hosts[static_cast<std::size_t>(r)], [&, r] {
        const dts::sim::TimeAccount::ActorScope accounted(&account, r);
        dts::sim::SimComm comm(world, r);
        dts::Vec none(0, true);
        if (r == 0) comm.isend(1, 7, none, opts).wait_ok();
        if (r == 1) {
          comm.recv(0, 7, none);
          comm.isend(2, 7, none, opts).wait_ok();
        }
        if (r == 2) comm.recv(1, 7, none);
      });
    }
    engine->run();
    return json{{"hosts", {hosts[0]->get_name(), hosts[1]->get_name(), hosts[2]->get_name()}},
                {"actors", to_json(account.actors(sg4::Engine::get_clock()))}};
  });
  REQUIRE_FALSE(out.contains("error"));
  CHECK(out["hosts"] == json({"node-0-cpu", "node-0-dev-0", "node-0-dev-1"}));
  const json& a = out["actors"];
  REQUIRE(a.size() == 3);
  const auto own1 = a[1]["own"].get<std::vector<double>>(), own2 = a[2]["own"].get<std::vector<double>>();
  const auto path2 = a[2]["path"].get<std::vector<double>>();
  CHECK(a[0]["end"].get<double>() == Approx(t).epsilon(1e-9));
  CHECK(own1[at(TimeCategory::kCpuGpuParameter)] == Approx(t).epsilon(1e-9));
  CHECK(own1[at(TimeCategory::kGpuGpuParameter)] == Approx(t).epsilon(1e-9));  // its own blocking send
  CHECK(own2[at(TimeCategory::kIdle)] == Approx(t).epsilon(1e-9));
  CHECK(own2[at(TimeCategory::kGpuGpuParameter)] == Approx(t).epsilon(1e-9));
  CHECK(own2[at(TimeCategory::kCpuGpuParameter)] == 0);
  CHECK(path2[at(TimeCategory::kCpuGpuParameter)] == Approx(t).epsilon(1e-9));
  CHECK(path2[at(TimeCategory::kGpuGpuParameter)] == Approx(t).epsilon(1e-9));
  CHECK(path2[at(TimeCategory::kIdle)] == Approx(0).margin(1e-12));
}

TEST_CASE("sim::TimeAccount: each world records into the account it was given, none into a world without", "[sim]") {
  /* In details:
   *   o one engine, three worlds on the same hosts: A and B with an account each, C with none
   *   o in A rank 0 (CPU) sends to rank 1 (device 0); in B rank 2 (device 1) sends to rank 1; in C rank 0
   *     sends to rank 2; the actors of C are registered in A, but C's messages are not accounted
   * Expectations
   *   o A holds ranks 0, 1 and C's actors: CPU-GPU parameter time only, none of it GPU-GPU; C's receiver
   *     (rank 2) only idle time
   *   o B holds ranks 1 and 2: GPU-GPU parameter time only
   */
  const json out = dts::test::run_isolated([&] {
    const auto engine = dts::test::quiet_engine();
    const auto hosts = dts::sim::build_platform(node_platform(), 3, 2);
    dts::sim::TimeAccount account_a, account_b;
    dts::sim::SimWorld world_a(hosts, &account_a), world_b(hosts, &account_b), world_c(hosts);
    const dts::SendOptions opts{12'000'000};
    auto pair = [&](dts::sim::SimWorld& world, dts::sim::TimeAccount* account, dts::Rank from, dts::Rank to) {
      for (const dts::Rank r : {from, to}) {
        sg4::Actor::create("rank", hosts[static_cast<std::size_t>(r)], [&, account, from, to, r] {
          const dts::sim::TimeAccount::ActorScope accounted(account, r);
          dts::sim::SimComm comm(world, r);
          dts::Vec none(0, true);
          if (r == from) comm.isend(to, 7, none, opts).wait_ok();
          if (r == to) comm.recv(from, 7, none);
        });
      }
    };
    pair(world_a, &account_a, 0, 1);
    pair(world_b, &account_b, 2, 1);
    pair(world_c, &account_a, 0, 2);
    engine->run();
    const double now = sg4::Engine::get_clock();
    return json{{"a", to_json(account_a.actors(now))}, {"b", to_json(account_b.actors(now))}};
  });
  REQUIRE_FALSE(out.contains("error"));
  auto sum = [&](const char* account, TimeCategory c) {
    double s = 0;
    for (const json& a : out[account]) s += a["own"].get<std::vector<double>>()[at(c)];
    return s;
  };
  CHECK(out["a"].size() == 4);
  CHECK(out["b"].size() == 2);
  CHECK(sum("a", TimeCategory::kCpuGpuParameter) > 0);
  CHECK(sum("a", TimeCategory::kGpuGpuParameter) == 0);
  CHECK(sum("b", TimeCategory::kGpuGpuParameter) > 0);
  CHECK(sum("b", TimeCategory::kCpuGpuParameter) == 0);
  for (const json& a : out["a"]) {  // C's receiver: its wait was not recorded, so all of its time is idle
    if (a["rank"] != 2) continue;
    const auto own = a["own"].get<std::vector<double>>();
    CHECK(own[at(TimeCategory::kCpuGpuParameter)] == 0);
    CHECK(own[at(TimeCategory::kIdle)] > 0);
  }
}

TEST_CASE("sim::TimeAccount: every actor's categories add up to its elapsed time", "[sim]") {
  /* Expectations, for every rank and spawned activity of the master-worker and sync algorithms:
   *   o own categories (idle included) sum to end - start; the path sums to end (it starts at 0)
   *   o workers spend at least steps x 2 ms in F/B (more when reductions of an overlapped exchange share
   *     the device with it, Sync EASGD3)
   */
  const auto [algorithm, config, fidelity] = GENERATE(table<std::string, json, dts::sim::Fidelity>(
      {{"easgd_original", {{"overlap", false}}, dts::sim::Fidelity::kMessage},
       {"easgd_async", json::object(), dts::sim::Fidelity::kMessage},
       {"easgd_hogwild", json::object(), dts::sim::Fidelity::kMessage},
       {"easgd_sync", {{"variant", 3}}, dts::sim::Fidelity::kMessage},
       {"easgd_sync", {{"variant", 1}}, dts::sim::Fidelity::kCollective}}));
  CAPTURE(algorithm, config.dump());
  const json out = run_algorithm(algorithm, config, 8, 2e-3, fidelity);
  REQUIRE_FALSE(out.contains("error"));
  for (const auto& a : out["actors"]) {
    const auto own = a["own"].get<std::vector<double>>(), path = a["path"].get<std::vector<double>>();
    double own_sum = 0, path_sum = 0;
    for (double x : own) own_sum += x;
    for (double x : path) path_sum += x;
    CAPTURE(a.dump());
    CHECK(own_sum == Approx(a["end"].get<double>() - a["start"].get<double>()).margin(1e-12).epsilon(1e-9));
    CHECK(path_sum == Approx(a["end"].get<double>()).margin(1e-12).epsilon(1e-9));
    if (a["main"].get<bool>() && a["rank"].get<int>() >= 1) {
      CHECK(own[at(TimeCategory::kForwardBackward)] >= 8 * 2e-3 * (1 - 1e-9));
      CHECK(own[at(TimeCategory::kForwardBackward)] <= 8 * 2e-3 * 1.1);
    }
  }
  double run_sum = 0;
  for (double x : out["run"]) run_sum += x;
  CHECK(run_sum <= out["end_s"].get<double>() * (1 + 1e-12));
}

TEST_CASE("sim::TimeAccount: Sync EASGD3 hides the GPU-GPU exchange that Sync EASGD2 shows", "[sim]") {
  /* In details:
   *   o LeNet, 1.72 MB of parameters; F/B 1 ms; 20 steps; a tree broadcast + reduce over 4 devices is
   *     4 hops of about 0.15 ms, shorter than the F/B
   * Expectations
   *   o variant 2: the run's path carries the exchange, at least 20 x 4 x 0.14 ms of GPU-GPU parameter time,
   *     and no CPU-GPU parameter time (master on GPU1)
   *   o variant 3: under 5 % of variant 2's GPU-GPU time on the path, and a shorter run
   *   o variant 1 (master on the CPU): CPU-GPU parameter time on the path
   *   o all: the data copies, 20 x (2 us + 64 x 784 x 4 B / 12 GB/s) at least; one F/B per step on the
   *     path (variant 3's slowed down a little by the reductions that share its device)
   */
  const json v1 = run_algorithm("easgd_sync", {{"variant", 1}}, 20, 1e-3);
  const json v2 = run_algorithm("easgd_sync", {{"variant", 2}}, 20, 1e-3);
  const json v3 = run_algorithm("easgd_sync", {{"variant", 3}}, 20, 1e-3);
  REQUIRE_FALSE(v2.contains("error"));
  REQUIRE_FALSE(v3.contains("error"));
  const auto run1 = v1["run"].get<std::vector<double>>(), run2 = v2["run"].get<std::vector<double>>(),
             run3 = v3["run"].get<std::vector<double>>();
  const double hop = 431080 * 4 / (kLinkBps / 8), copy = 2 * kLinkLatencyS + 64 * 784 * 4 / (kLinkBps / 8);
  CHECK(run2[at(TimeCategory::kGpuGpuParameter)] >= 20 * 4 * hop);
  CHECK(run2[at(TimeCategory::kCpuGpuParameter)] == 0);
  CHECK(run3[at(TimeCategory::kGpuGpuParameter)] < 0.05 * run2[at(TimeCategory::kGpuGpuParameter)]);
  CHECK(v3["end_s"].get<double>() < v2["end_s"].get<double>());
  CHECK(run1[at(TimeCategory::kCpuGpuParameter)] > 20 * hop);
  for (const auto* run : {&run1, &run2, &run3}) {
    CHECK((*run)[at(TimeCategory::kCpuGpuData)] >= 20 * copy * (1 - 1e-9));
    CHECK((*run)[at(TimeCategory::kForwardBackward)] >= 20 * 1e-3 * (1 - 1e-9));
    CHECK((*run)[at(TimeCategory::kForwardBackward)] <= 20 * 1e-3 * 1.1);
  }
}

TEST_CASE("sim::TimeAccount: the collective fidelity's trees give the breakdown of their messages", "[sim]") {
  /* Expectations
   *   o Sync EASGD1 (tree broadcast and reduce through the CPU master), 10 steps: the run's path has the
   *     same seconds per category with run.fidelity collective as with messages: a member's wait follows
   *     the member whose flow ended it, as a receive follows its sender
   */
  const json message = run_algorithm("easgd_sync", {{"variant", 1}}, 10, 1e-3);
  const json collective = run_algorithm("easgd_sync", {{"variant", 1}}, 10, 1e-3, dts::sim::Fidelity::kCollective);
  REQUIRE_FALSE(message.contains("error"));
  REQUIRE_FALSE(collective.contains("error"));
  const auto m = message["run"].get<std::vector<double>>(), c = collective["run"].get<std::vector<double>>();
  for (std::size_t i = 0; i < dts::sim::kTimeCategories; ++i) {
    CAPTURE(dts::sim::to_string(static_cast<TimeCategory>(i)));
    CHECK(c[i] == Approx(m[i]).margin(1e-12).epsilon(1e-9));
  }
  CHECK(m[at(TimeCategory::kCpuGpuParameter)] > 0);
}
