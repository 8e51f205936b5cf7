// The hypercube (recursive doubling) allreduce, added as a plan only (algorithms/collectives/hypercube.cpp):
// its sums, its messages, and the same completion times at both fidelities on a pinned star.
#include <catch2/catch.hpp>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/collectives/plans.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

// v_r[i] = r * 1000 + i: the sum over P ranks is exact in floats.
nlohmann::json run_hypercube(int P, std::size_t floats, bool real, dts::sim::Fidelity fidelity) {
  auto out = dts::test::simulate(
      dts::test::pinned_star(P, 8e9, 10e-6), P,
      [P, floats, real](auto& comm, auto&, auto& o) {
        dts::CollectiveOnlyCompute compute;
        std::vector<float> v(real ? floats : 0);
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(comm.rank() * 1000 + static_cast<int>(i));
        const dts::Slice data = real ? dts::Slice(v) : dts::Slice({}, floats);
        dts::collectives::hypercube_allreduce(comm, compute, dts::Group::range(0, P), data, 7);
        o["t"] = comm.now_s();
        o["v"] = v;
        o["sent"] = comm.bytes_sent();
      },
      fidelity);
  REQUIRE(!out.contains("error"));
  return out;
}

}  // namespace

TEST_CASE("hypercube_allreduce: the plan's stages", "[sim][collectives]") {
  // 8 members: 3 dimensions, each one full-vector exchange with the partner across it.
  const dts::collectives::HypercubePlan eight(8, 10);
  for (int m = 0; m < 8; ++m) {
    REQUIRE(eight.stages(m) == 3);
    for (int s = 0; s < 3; ++s) {
      const auto st = eight.stage(m, s);
      REQUIRE(st.sends.size() == 1);
      REQUIRE(st.recvs.size() == 1);
      CHECK(st.sends[0].peer == (m ^ (1 << s)));
      CHECK(st.recvs[0].peer == (m ^ (1 << s)));
      CHECK(st.sends[0].chunk.count == 10);
      CHECK(st.recvs[0].add);
    }
  }
  // 6 members: 0 folds into 1 and 2 into 3; members 1, 3, 4, 5 form the cube of 4.
  const dts::collectives::HypercubePlan six(6, 10);
  CHECK(six.stages(0) == 2);
  CHECK(six.stages(1) == 4);
  CHECK(six.stages(4) == 2);
  CHECK(six.stage(0, 0).sends[0].peer == 1);
  CHECK(six.stage(1, 0).recvs[0].peer == 0);
  CHECK(six.stage(1, 1).sends[0].peer == 3);  // new ranks 0 and 1
  CHECK(six.stage(1, 2).sends[0].peer == 4);  // new ranks 0 and 2
  CHECK(six.stage(1, 3).sends[0].peer == 0);  // the sum back
  CHECK(six.stage(0, 1).recvs[0].peer == 1);
}

TEST_CASE("hypercube_allreduce: exact sums, lg P messages of the whole vector, one time at both fidelities",
          "[sim][collectives]") {
  const int P = GENERATE(2, 4, 6, 8);
  const std::size_t n = 13;
  INFO("P = " << P);
  const auto message = run_hypercube(P, n, true, dts::sim::Fidelity::kMessage);
  const auto collective = run_hypercube(P, n, true, dts::sim::Fidelity::kCollective);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<float>(1000 * P * (P - 1) / 2 + P * static_cast<int>(i));
  int pof2 = 1, dims = 0;
  while (pof2 * 2 <= P) pof2 *= 2, ++dims;
  const int rem = P - pof2;
  CHECK(message["messages"] == pof2 * dims + 2 * rem);
  CHECK(collective["messages"] == message["messages"]);
  for (int r = 0; r < P; ++r) {
    INFO("rank " << r);
    CHECK(message["rank"][r]["v"] == nlohmann::json(want));
    CHECK(collective["rank"][r]["v"] == nlohmann::json(want));
    const int sends = r < 2 * rem ? (r % 2 == 0 ? 1 : dims + 1) : dims;
    CHECK(message["rank"][r]["sent"] == 4 * n * static_cast<std::size_t>(sends));
    CHECK(collective["rank"][r]["sent"] == message["rank"][r]["sent"]);
  }
  // Modeled 100 MB vectors: lg P (alpha + n / B) when P is a power of 2 (the both directions of an exchange
  // do not share a link).
  const auto tm = run_hypercube(P, 25'000'000, false, dts::sim::Fidelity::kMessage);
  const auto tc = run_hypercube(P, 25'000'000, false, dts::sim::Fidelity::kCollective);
  const double step = 2 * 10e-6 + 1e8 / 1e9;
  for (int r = 0; r < P; ++r) {
    INFO("rank " << r);
    const double t = tm["rank"][r]["t"].get<double>();
    CHECK(tc["rank"][r]["t"].get<double>() == Approx(t).epsilon(1e-9));
    if (rem == 0) CHECK(t == Approx(step * dims).epsilon(1e-6));
  }
}
