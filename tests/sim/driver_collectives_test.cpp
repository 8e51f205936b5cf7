// MPCA's collectives (algorithms/collectives/driver_collectives.hpp): the plans' shapes, checked message by
// message, and runs on the simulator at both fidelities: the weighted binary tree reduce against its closed form,
// the swarm broadcast delivering every chunk to every worker once, the driver sending each chunk once.
#include <catch2/catch.hpp>
#include <map>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/driver_collectives.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

using dts::collectives::BinaryTreeReducePlan;
using dts::collectives::SwarmBroadcastPlan;

// Member r's vector: x_r[i] = r + i / 8 (exact in floats), weight w_r = r % 3 (0 for some: they add nothing).
float x_of(int r, std::size_t i) { return static_cast<float>(r) + static_cast<float>(i) / 8.0f; }
float w_of(int r) { return static_cast<float>(r % 3); }

nlohmann::json run(int P, const std::function<void(dts::sim::SimComm&, nlohmann::json&)>& body,
                   dts::sim::Fidelity fidelity) {
  auto out = dts::test::simulate(
      dts::test::pinned_star(P, 1e9, 10e-6), P, [&](auto& comm, auto&, auto& o) { body(comm, o); }, fidelity);
  REQUIRE(!out.contains("error"));
  return out;
}

}  // namespace

TEST_CASE("binary tree reduce: a heap-ordered binary tree, each child added once", "[sim][collectives][mpca]") {
  const int P = GENERATE(2, 3, 4, 7, 9), root = GENERATE(0, 1);
  const BinaryTreeReducePlan plan(P, root % P, 5);
  std::map<int, int> adds_into, sends_from;  // by member
  for (int m = 0; m < P; ++m) {
    for (int s = 0; s < plan.stages(m); ++s) {
      const auto st = plan.stage(m, s);
      INFO("P " << P << ", member " << m << ", stage " << s);
      if (s > 0) CHECK((!st.sends.empty() || !st.recvs.empty()));  // no ring step that moves nothing
      for (const auto& r : st.recvs) {
        CHECK(r.add);
        ++adds_into[m];
      }
      for (const auto& x : st.sends) {
        ++sends_from[m];
        CHECK(s == plan.stages(m) - 1);  // the total goes up last
        const int v = (m - root % P + P) % P, parent = (x.peer - root % P + P) % P;
        CHECK(parent == (v - 1) / 2);
      }
    }
  }
  CHECK(sends_from[root % P] == 0);
  for (int m = 0; m < P; ++m) {
    CHECK(adds_into[m] <= 2);
    if (m != root % P) CHECK(sends_from[m] == 1);
  }
}

TEST_CASE("weighted tree reduce: the driver gets sum w_i x_i and sum w_i, the closed form of Eq. 9",
          "[sim][collectives][mpca]") {
  const int P = GENERATE(2, 3, 5, 9);
  const bool weighted = GENERATE(true, false);
  const auto fidelity = GENERATE(dts::sim::Fidelity::kMessage, dts::sim::Fidelity::kCollective);
  const std::size_t n = 11;
  INFO("P = " << P << (weighted ? ", weighted" : ", unweighted") << ", " << dts::sim::to_string(fidelity));
  const auto out = run(
      P,
      [&](auto& comm, auto& o) {
        dts::CollectiveOnlyCompute compute;
        std::vector<float> v(n + 1, -7.0f);  // the root's is overwritten: it contributes nothing
        if (comm.rank() != 0) {
          for (std::size_t i = 0; i < n; ++i) v[i] = x_of(comm.rank(), i);
          v[n] = w_of(comm.rank());
        }
        dts::collectives::weighted_tree_reduce(comm, compute, dts::Group::range(0, P), dts::Slice(v), 0, 9, weighted);
        o["v"] = v;
      },
      fidelity);
  CHECK(out["messages"] == P - 1);
  const auto got = out["rank"][0]["v"].get<std::vector<double>>();
  double W = 0;
  for (int r = 1; r < P; ++r) W += w_of(r);
  CHECK(got[n] == W);
  for (std::size_t i = 0; i < n; ++i) {
    double want = 0;
    for (int r = 1; r < P; ++r) want += (weighted ? w_of(r) : 1.0) * x_of(r, i);
    INFO("float " << i);
    CHECK(got[i] == Approx(want).epsilon(1e-6));
  }
}

TEST_CASE("swarm broadcast plan: every chunk reaches every worker once; the driver sends each chunk once",
          "[sim][collectives][mpca]") {
  const int P = GENERATE(2, 3, 5, 9, 12, 33), root = GENERATE(0, 2);  // 12, 33: fewer chunks than ring steps
  const bool reserve = GENERATE(true, false);
  const std::size_t n = 37, cf = 4;  // 10 chunks, the last of 1 float
  const SwarmBroadcastPlan plan(P, root % P, n, cf, reserve);
  REQUIRE(plan.chunks() == 10);
  std::map<std::pair<int, std::size_t>, int> got;  // (member, chunk offset) -> receives
  std::map<std::size_t, int> root_sends;           // chunk offset -> the root's sends of it
  for (int m = 0; m < P; ++m) {
    std::map<std::size_t, bool> held;  // what m holds before each stage: the root all, a worker nothing
    for (std::size_t j = 0; j < plan.chunks(); ++j) held[plan.chunk(j).offset] = m == root % P;
    for (int s = 0; s < plan.stages(m); ++s) {
      const auto st = plan.stage(m, s);
      INFO("P " << P << ", member " << m << ", stage " << s);
      if (s > 0) CHECK((!st.sends.empty() || !st.recvs.empty()));  // no ring step that moves nothing
      for (const auto& x : st.sends) {
        CHECK(held[x.chunk.offset]);  // only what it holds
        if (m == root % P) ++root_sends[x.chunk.offset];
      }
      for (const auto& r : st.recvs) {
        CHECK(!r.add);
        ++got[{m, r.chunk.offset}];
        held[r.chunk.offset] = true;
      }
    }
  }
  for (int m = 0; m < P; ++m) {
    for (std::size_t j = 0; j < plan.chunks(); ++j) {
      INFO("member " << m << ", chunk " << j);
      CHECK(got[{m, plan.chunk(j).offset}] == (m == root % P ? 0 : 1));
    }
  }
  for (std::size_t j = 0; j < plan.chunks(); ++j) CHECK(root_sends[plan.chunk(j).offset] == (reserve ? 1 : P - 1));
}

TEST_CASE("swarm broadcast: every worker ends with the driver's data, the driver's uplink carrying it once",
          "[sim][collectives][mpca]") {
  const int P = GENERATE(2, 4, 6);
  const bool reserve = GENERATE(true, false);
  const auto fidelity = GENERATE(dts::sim::Fidelity::kMessage, dts::sim::Fidelity::kCollective);
  const std::size_t n = 1000, cf = 64;  // 16 chunks
  INFO("P = " << P << (reserve ? ", re-served" : ", from the driver alone") << ", " << dts::sim::to_string(fidelity));
  const auto out = run(
      P,
      [&](auto& comm, auto& o) {
        std::vector<float> v(n, 0.0f);
        if (comm.rank() == 0) {
          for (std::size_t i = 0; i < n; ++i) v[i] = x_of(1, i);
        }
        dts::collectives::swarm_broadcast(comm, dts::Group::range(0, P), dts::Slice(v), 0, 4, cf, reserve);
        o["v"] = v;
        o["sent"] = comm.bytes_sent();
      },
      fidelity);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = x_of(1, i);
  for (int r = 1; r < P; ++r) CHECK(out["rank"][r]["v"] == nlohmann::json(want));
  CHECK(out["messages"] == 16 * (P - 1));  // one per chunk and worker either way
  CHECK(out["rank"][0]["sent"] == 4 * n * (reserve ? 1 : P - 1));
}
