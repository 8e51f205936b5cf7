// Wall time of the simulator per iteration at both fidelities (the scale targets of run.fidelity, README).
// Not a test: hidden tag [.measure], run by hand, e.g. `build/tests/test_sim "[.measure]" -s`.
// Platform: a star of 10 Gb/s, 50 us split-duplex links, LV08 with its default factors.
#include <catch2/catch.hpp>

#include <iostream>

#include "algorithms/collectives/collectives.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

dts::sim::PlatformSpec lv08_star(int hosts) {
  dts::sim::PlatformSpec p;
  p.name = "star";
  p.hosts = hosts;
  p.device.peak_flops = 1e12;
  return p;
}

class NoCompute final : public dts::Compute {
 public:
  std::size_t num_params() const override { return 0; }
  bool real() const override { return false; }
  std::vector<dts::model::ParamBlock> param_blocks() const override { return {}; }
  void init_params(dts::Slice) override {}
  float forward_backward(dts::ConstSlice, dts::Slice) override { return 0; }
  void optimizer_step(dts::Slice, dts::ConstSlice) override {}
  void charge_elementwise(std::size_t, int) override {}
  std::vector<dts::Slice> optimizer_state() override { return {}; }
  std::vector<std::uint32_t> next_batch_rows() override { return {}; }
  void replace_last_batch_rows(std::span<const std::uint32_t>) override {}
  std::uint64_t raw_batch_bytes() const override { return 0; }
  std::size_t take_over_shards(std::span<const int>, int, int) override { return 0; }
  void optimizer_step_range(dts::Slice, dts::ConstSlice, std::size_t, std::int64_t) override {}
};

void report(const std::string& what, int P, int iters, dts::sim::Fidelity f, const nlohmann::json& out) {
  REQUIRE(!out.contains("error"));
  std::cout << what << " P=" << P << " " << dts::sim::to_string(f) << ": wall/iter "
            << out["host"]["wall_s"].get<double>() / iters << " s, simulated/iter "
            << out["end_s"].get<double>() / iters << " s, messages " << out["messages"] << ", max RSS "
            << out["host"]["max_rss_kb"].get<double>() / 1024 << " MB\n";
}

}  // namespace

TEST_CASE("measure: ring allreduce of 100 MB, modeled", "[.measure]") {
  const int P = GENERATE(256, 1024);
  const auto fidelity = GENERATE(dts::sim::Fidelity::kCollective, dts::sim::Fidelity::kMessage);
  const int iters = fidelity == dts::sim::Fidelity::kMessage ? 1 : 5;
  const auto out = dts::test::simulate(
      lv08_star(P), P,
      [&](auto& comm, auto&, auto&) {
        NoCompute compute;
        const dts::Group everyone = dts::Group::range(0, P);
        for (int i = 0; i < iters; ++i) {
          dts::collectives::ring_allreduce(comm, compute, everyone, dts::Slice({}, 25'000'000), 1);
        }
      },
      fidelity);
  report("ring_allreduce 100 MB", P, iters, fidelity, out);
}

TEST_CASE("measure: pairwise gossip of 100 MB, modeled", "[.measure]") {
  const int P = GENERATE(1024, 4096);
  const auto fidelity = GENERATE(dts::sim::Fidelity::kCollective, dts::sim::Fidelity::kMessage);
  const int iters = 5;
  const auto out = dts::test::simulate(
      lv08_star(P), P,
      [&](auto& comm, auto&, auto&) {
        for (int i = 0; i < iters; ++i) {  // hypercube partners: a different pairing every iteration
          const dts::Rank peer = comm.rank() ^ (1 << (i % 12));
          if (peer < P)
            dts::collectives::pairwise_exchange(comm, peer, dts::ConstSlice({}, 25'000'000), dts::Slice({}, 25'000'000),
                                                1);
        }
      },
      fidelity);
  report("pairwise_exchange 100 MB", P, iters, fidelity, out);
}
