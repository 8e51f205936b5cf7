// Time in MPCA's driver and in its EASGD baseline, on the simulator's device model (SimCompute, modeled LeNet):
// a preparation costs its passes over the shard on the driver's device (the platform's master_device) plus the
// broadcast variable's compression, so the 2-phase pattern, which prepares before its reduce, has longer cycles
// than the 3-phase one, which prepares during it; and seeded per-step jitter breaks easgd_driver's lockstep,
// where every worker asks for x~ at the same moment.
#include <catch2/catch.hpp>
#include <map>

#include "algorithms/algorithm.hpp"
#include "sim/time_account.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

using nlohmann::json;

namespace {

// Every step's end time per worker, and the run's counters (summed over the ranks).
class StepClock final : public dts::Recorder {
 public:
  StepClock(dts::Comm& comm, json& out) : comm_(comm), out_(out) {}
  void step(std::int64_t, float) override { out_["t"][std::to_string(comm_.rank())].push_back(comm_.now_s()); }
  bool eval_due(std::int64_t) const override { return false; }
  void evaluate(std::int64_t, dts::ConstSlice, bool) override {}
  void count(const std::string& name, std::int64_t value) override {
    json& c = out_["counters"][name];
    c = (c.is_null() ? 0 : c.get<std::int64_t>()) + value;
  }

 private:
  dts::Comm& comm_;
  json& out_;
};

struct TimedRun {
  std::string algorithm;
  json config;
  json platform;
  int workers = 2;
  std::int64_t steps = 100;
  double step_time_s = 1e-3;
  double jitter_sigma = 0;  // lognormal per-step jitter on every worker (0: none)
  std::uint64_t seed = 1;
};

// A star of NICs at `bandwidth_bps`, 50 us per link, no TCP factors; the workers' device streams at 1 PB/s (its
// passes take no time); with `master`, the driver's host is that device.
json star(std::optional<json> master, double bandwidth_bps) {
  json p = {{"device", {{"peak_flops", 1e12}, {"mem_bw_Bps", 1e15}, {"efficiency", 1.0}}},
            {"link_bandwidth_bps", bandwidth_bps},
            {"link_latency_s", 5e-5},
            {"network_model", "CM02"},
            {"simgrid_config", {{"network/crosstraffic", "0"}}}};
  if (master) p["master_device"] = *master;
  return p;
}
const json kSlowCpu = {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e9}, {"efficiency", 1.0}};

// {"t": {rank: [end of each step]}, "counters": {...}, "end_s", "wait_s": {rank: time neither computing nor
// updating}}, from a run of modeled LeNet with `step_time_s` per forward-backward, in an isolated child.
json run_timed(const TimedRun& run) {
  return dts::test::run_isolated([&] {
    const dts::AlgorithmSpec& spec = dts::find_algorithm(run.algorithm, "test");
    dts::ConfigReader reader(run.config, "test", "/algorithm");
    dts::data::Dataset mnist{"mnist", 60000, 1, 28, 28, 10, {}, {}};
    dts::sim::ModelSetup setup;
    setup.trainer.network = "lenet";
    setup.trainer.real = false;
    setup.trainer.train = &mnist;
    setup.trainer.batch = 64;
    setup.trainer.workers = run.workers;
    setup.trainer.first_worker_rank = 1;
    setup.step_time_s = run.step_time_s;
    setup.scenario.seed = run.seed;
    if (run.jitter_sigma > 0) {
      dts::Jitter j;
      for (dts::Rank r = 1; r <= run.workers; ++r) j.ranks.push_back(r);
      j.sigma = run.jitter_sigma;
      setup.scenario.jitter.push_back(j);
    }
    dts::sim::SimJob job;
    job.platform = dts::sim::read_platform(run.platform, "p.json", "", ".");
    job.workers = run.workers;
    job.ranks = spec.ranks(reader, run.workers);
    job.steps = run.steps;
    job.main = spec.configure(reader, run.workers);
    reader.finish();
    dts::test::use_sim_compute(job, setup);
    json out;
    job.make_recorder = [&out](dts::Comm& comm) -> std::unique_ptr<dts::Recorder> {
      return std::make_unique<StepClock>(comm, out);
    };
    const auto outcome = dts::sim::run_simulation(job);
    out["end_s"] = outcome.simulated_time_s;
    const auto at = [](dts::sim::TimeCategory c) { return static_cast<std::size_t>(c); };
    for (const auto& a : outcome.actor_times) {
      if (!a.main || a.rank < 1) continue;
      const double busy =
          a.own[at(dts::sim::TimeCategory::kForwardBackward)] + a.own[at(dts::sim::TimeCategory::kGpuUpdate)];
      out["wait_s"][std::to_string(a.rank)] = a.end_s - a.start_s - busy;
    }
    return out;
  });
}

// The mean driver cycle past the pipeline's fill while the workers train (the driver's counters).
double cycle_s(const json& out) {
  return out["counters"]["mpca_training_cycle_us"].get<double>() * 1e-6 /
         out["counters"]["mpca_training_cycles"].get<double>();
}

TimedRun mpca_run(int phases, std::optional<json> master, double compress_Bps) {
  TimedRun run{.algorithm = "mpca",
               .config = {{"phases", phases}, {"shards", 3}, {"reserve_chunks", false}},
               .platform = star(master, 1e8)};
  run.steps = 8000;
  if (compress_Bps > 0) run.config["broadcast_compress_Bps"] = compress_Bps;
  return run;
}

constexpr double kShardFloats = 431080 / 3.0;  // LeNet's floats in 3 shards (of 143,694, 143,693 and 143,693)

}  // namespace

TEST_CASE("mpca: one preparation charges its 16 passes on the driver's device and the compression",
          "[algorithms][mpca]") {
  /* In details:
   *   o 2 workers, LeNet (431,080 floats) in 3 shards, 100 Mb/s NICs, the 2-phase pattern (a preparation runs
   *     alone on the driver, before its cycle's reduce); the driver's host streams at 1 GB/s (update_efficiency 1),
   *     the broadcast variable is compressed at 20 MB/s
   * Expectations
   *   o one preparation per cycle
   *   o each takes 16 streams of 4 bytes per float of its shard at 1 GB/s (Eq. 9: 2, Eq. 8: 5, Eq. 4: 4, Eq. 5:
   *     3, serialised: 2) plus 4 bytes per float at 20 MB/s: on the mean shard, 9.2 ms + 28.7 ms
   */
  const json out = run_timed(mpca_run(2, kSlowCpu, 2e7));
  INFO(out["counters"].dump());
  const auto& c = out["counters"];
  CHECK(c["mpca_preparations"] == c["mpca_cycles"]);
  const double per = c["mpca_prepare_us"].get<double>() * 1e-6 / c["mpca_preparations"].get<double>();
  CHECK(per == Approx(16 * 4 * kShardFloats / 1e9 + 4 * kShardFloats / 2e7).epsilon(1e-4));
}

TEST_CASE("mpca: the 2-phase cycle is longer than the 3-phase one by the preparation, once it costs time",
          "[algorithms][mpca]") {
  /* In details:
   *   o as above; a cycle's reduce of a shard (575 KB from each worker into the driver's 100 Mb/s NIC) takes about
   *     0.1 s, and so does the broadcast of another beside it (the driver sends each worker its copy:
   *     reserve_chunks false, so that no worker relays a broadcast into the next cycle); a preparation takes
   *     P = 37.9 ms (compressed at 20 MB/s) or 153 ms (at 4 MB/s)
   *   o a worker's snapshot for a reduce waits for its step to end: up to one step (1 ms) per cycle
   * Expectations
   *   o the keys off (the driver's passes take no time on the workers' device, no compression): the 2- and
   *     3-phase cycles are equal (the patterns differ only in which shard goes out), within 0.1 ms
   *   o P below the reduce: the 2-phase cycle is P longer (it prepares, then reduces; the 3-phase pattern does
   *     both at once), within the step boundary's wait
   *   o P above the reduce: the 3-phase cycle is P (the driver is the bottleneck), the 2-phase one P plus the
   *     reduce (the keys-off cycle, and the driver's two additions of 3 x 575 KB at 1 GB/s: within 5 ms)
   */
  const double off2 = cycle_s(run_timed(mpca_run(2, std::nullopt, 0)));
  const double off3 = cycle_s(run_timed(mpca_run(3, std::nullopt, 0)));
  CHECK(off2 == Approx(off3).margin(1e-4));

  const double p = 16 * 4 * kShardFloats / 1e9 + 4 * kShardFloats / 2e7;
  const double two = cycle_s(run_timed(mpca_run(2, kSlowCpu, 2e7)));
  const double three = cycle_s(run_timed(mpca_run(3, kSlowCpu, 2e7)));
  INFO("cycles: keys off " << off2 << " s, 2-phase " << two << " s, 3-phase " << three << " s");
  CHECK(two - three == Approx(p).margin(1e-3));

  const double slow_p = 16 * 4 * kShardFloats / 1e9 + 4 * kShardFloats / 4e6;
  REQUIRE(slow_p > off3);
  const double slow2 = cycle_s(run_timed(mpca_run(2, kSlowCpu, 4e6)));
  const double slow3 = cycle_s(run_timed(mpca_run(3, kSlowCpu, 4e6)));
  INFO("P above the reduce: 2-phase " << slow2 << " s, 3-phase " << slow3 << " s");
  CHECK(slow3 == Approx(slow_p).epsilon(0.01));
  CHECK(slow2 - slow3 == Approx(off3).margin(5e-3));
}

TEST_CASE("easgd_driver: seeded per-step jitter breaks the workers' lockstep at the server", "[algorithms][mpca]") {
  /* In details:
   *   o 8 workers, tau 20, 200 steps of 50 ms; LeNet's 1.72 MB x~ takes 14 ms alone over a 1 Gb/s NIC
   *   o a worker asks for x~ right after its step k tau ends
   * Expectations
   *   o without jitter all 8 ask within 1 ms of each other at every exchange, and wait for the 8 downloads
   *     sharing the server's NIC
   *   o with lognormal jitter (sigma 0.1 per step) they drift apart by more than one download on average, and
   *     wait less per exchange
   *   o the same seed gives the same run, step for step; another seed another
   */
  TimedRun run{.algorithm = "easgd_driver", .config = {{"comm_period_steps", 20}}, .platform = star(kSlowCpu, 1e9)};
  run.workers = 8;
  run.steps = 200;
  run.step_time_s = 0.05;
  const auto spread = [](const json& out) {  // mean over the exchanges after the first of the request times' range
    double sum = 0;
    int n = 0;
    for (std::size_t k = 20; k < 200; k += 20, ++n) {
      double lo = 1e300, hi = -1e300;
      for (const auto& [rank, t] : out["t"].items()) {
        lo = std::min(lo, t[k - 1].get<double>());
        hi = std::max(hi, t[k - 1].get<double>());
      }
      sum += hi - lo;
    }
    return sum / n;
  };
  const auto mean_wait = [](const json& out) {
    double sum = 0;
    for (const auto& [rank, w] : out["wait_s"].items()) sum += w.get<double>();
    return sum / static_cast<double>(out["wait_s"].size());
  };
  const json lockstep = run_timed(run);
  run.jitter_sigma = 0.1;
  const json jittered = run_timed(run), again = run_timed(run);
  run.seed = 2;
  const json other = run_timed(run);
  INFO("spread " << spread(lockstep) << " s / " << spread(jittered) << " s; wait " << mean_wait(lockstep) << " s / "
                 << mean_wait(jittered) << " s");
  CHECK(spread(lockstep) < 1e-3);
  CHECK(spread(jittered) > 1.72e6 * 8 / 1e9);
  CHECK(mean_wait(jittered) < mean_wait(lockstep));
  CHECK(jittered == again);
  CHECK(jittered["t"] != other["t"]);
}
