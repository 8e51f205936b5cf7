// BIDMach's quorum allreduce round (algorithms/collectives/quorum_allreduce.hpp) on the simulator: the exact line
// mean with every quorum at 1, its messages and bytes, a slow member left out by quorums below 1 with the missing
// data rules checked value by value, and force() on a member that never sends.
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/collectives/quorum_allreduce.hpp"
#include "tests/sim/sim_harness.hpp"

namespace {

using dts::collectives::QuorumConfig;
using dts::collectives::QuorumCounts;
using dts::collectives::QuorumRound;

constexpr dts::collectives::QuorumTags kTags{5, 6};

// Member r's contribution: v_r[i] = r * 100 + i + 0.25 r^2 (sums of a few of them are exact in floats).
std::vector<float> contribution(int r, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(r * 100 + static_cast<int>(i)) + 0.25f * static_cast<float>(r * r);
  return v;
}

// The round's mean of chunk values over `members`, summed in member order and scaled by 1 / count.
float mean_of(const std::vector<int>& members, std::size_t i, std::size_t n) {
  float s = 0;
  bool first = true;
  for (int m : members) {
    s = first ? contribution(m, n)[i] : s + contribution(m, n)[i];
    first = false;
  }
  return s * (1.0f / static_cast<float>(members.size()));
}

nlohmann::json counts_json(const QuorumCounts& c) {
  return {{"chunks", c.chunks}, {"short", c.short_reduced}, {"missing", c.missing}, {"forced", c.forced}};
}

// Charges every reduction 1 ms, so that a member is busy while more chunks arrive and the reactor finds several
// completed at once, and runs their handlers in slot order, not chunk order (a round that counted contributions
// in handler order sent its reduced chunks out of order, into receives of the wrong size: B1 at 16 nodes).
class SlowAdds final : public dts::CollectiveOnlyCompute {
 public:
  explicit SlowAdds(dts::sim::SimNode* node) : node_(node) {}
  void charge_elementwise(std::size_t, int) override {
    if (node_ != nullptr) node_->sleep_for(1e-3);
  }

 private:
  dts::sim::SimNode* node_;
};

// Every member runs one blocking round; member `late` starts `delay_s` late.
nlohmann::json run_round(int P, std::size_t n, const QuorumConfig& cfg, int late = -1, double delay_s = 0,
                         bool slow_adds = false) {
  auto out = dts::test::simulate(dts::test::pinned_star(P, 1e9, 10e-6), P, [&](auto& comm, auto& node, auto& o) {
    SlowAdds compute(slow_adds ? &node : nullptr);
    std::vector<float> v = contribution(comm.rank(), n);
    if (comm.rank() == late) node.sleep_for(delay_s);
    const QuorumCounts c =
        dts::collectives::quorum_allreduce(comm, &compute, dts::Group::range(0, P), dts::Slice(v), kTags, 1, cfg);
    o["v"] = v;
    o["counts"] = counts_json(c);
    o["sent"] = comm.bytes_sent();
    o["t"] = comm.now_s();
  });
  REQUIRE(!out.contains("error"));
  return out;
}

}  // namespace

TEST_CASE("quorum allreduce: blocks of ceil(n / p), the last shorter", "[sim][collectives][bidmach]") {
  CHECK(QuorumRound::block(10, 4, 0).offset == 0);
  CHECK(QuorumRound::block(10, 4, 0).count == 3);
  CHECK(QuorumRound::block(10, 4, 3).offset == 9);
  CHECK(QuorumRound::block(10, 4, 3).count == 1);
  CHECK(QuorumRound::block(2, 4, 3).count == 0);  // fewer floats than members: empty blocks
}

TEST_CASE("quorum allreduce: every quorum at 1 gives the exact line mean, 2 (p - 1) messages per chunk",
          "[sim][collectives][bidmach]") {
  const int P = GENERATE(2, 3, 4, 5);
  const bool slow_adds = GENERATE(false, true);
  const std::size_t n = slow_adds ? 301 : 23;
  QuorumConfig cfg;
  cfg.chunk_floats = 3;
  INFO("P = " << P << (slow_adds ? ", reductions take time" : ""));
  const auto out = run_round(P, n, cfg, -1, 0, slow_adds);
  std::vector<int> all(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) all[static_cast<std::size_t>(r)] = r;
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = mean_of(all, i, n);
  std::size_t chunks = 0, floats_per_block = (n + P - 1) / P;
  for (int b = 0; b < P; ++b) chunks += (QuorumRound::block(n, P, b).count + 2) / 3;  // 3-float chunks
  CHECK(out["messages"] == 2 * (P - 1) * chunks);
  for (int r = 0; r < P; ++r) {
    INFO("member " << r);
    CHECK(out["rank"][r]["v"] == nlohmann::json(want));
    CHECK(out["rank"][r]["counts"] ==
          nlohmann::json({{"chunks", chunks}, {"short", 0}, {"missing", 0}, {"forced", false}}));
    // Its block to every other member, and the other blocks to their owners: 4 bytes a float.
    const std::size_t mine = QuorumRound::block(n, P, r).count;
    CHECK(out["rank"][r]["sent"] == 4 * ((n - mine) + static_cast<std::size_t>(P - 1) * mine));
  }
  (void)floats_per_block;
}

TEST_CASE("quorum allreduce: quorums of 3 of 4 leave a slow member out, the missing data as the code does",
          "[sim][collectives][bidmach]") {
  const int P = 4, late = 2;
  const std::size_t n = 16;  // blocks of 4, chunks of 2: 8 chunks
  QuorumConfig cfg;
  cfg.reduce = cfg.complete = 0.75;
  cfg.chunk_floats = 2;
  const auto q = run_round(P, n, cfg, late, 1.0);
  const auto full = run_round(P, n, QuorumConfig{1, 1, 2}, late, 1.0);
  const std::vector<int> fast = {0, 1, 3};
  for (int r : fast) {
    INFO("fast member " << r);
    // Done long before the slow member starts; the full quorum waits for it.
    CHECK(q["rank"][r]["t"].get<double>() < 0.5);
    CHECK(full["rank"][r]["t"].get<double>() > 1.0);
    // The fast members' blocks: the mean of the three fast contributions; the slow member's block: my own copy.
    for (std::size_t i = 0; i < n; ++i) {
      const bool slow_block = i / 4 == static_cast<std::size_t>(late);
      const float want = slow_block ? contribution(r, n)[i] : mean_of(fast, i, n);
      INFO("float " << i);
      CHECK(q["rank"][r]["v"][i].get<float>() == want);
    }
    CHECK(q["rank"][r]["counts"] == nlohmann::json({{"chunks", 8}, {"short", 2}, {"missing", 2}, {"forced", false}}));
  }
  // The slow member finds every contribution and every reduced chunk waiting, and completes on the quorum too:
  // after 6 of the 8 reduced chunks (its own two among them), the other two taken from its own copy; its own
  // block is the mean of three contributions.
  CHECK(q["rank"][late]["counts"] == nlohmann::json({{"chunks", 8}, {"short", 2}, {"missing", 2}, {"forced", false}}));
  std::size_t own_copy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float got = q["rank"][late]["v"][i].get<float>();
    if (i / 4 == static_cast<std::size_t>(late)) {
      CHECK(got != contribution(late, n)[i]);
    } else if (got == contribution(late, n)[i]) {
      ++own_copy;
    } else {
      CHECK(got == mean_of(fast, i, n));
    }
  }
  CHECK(own_copy == 2 * 2);  // two chunks of two floats
}

TEST_CASE("quorum allreduce: force() completes a round a member never joins, from what has arrived",
          "[sim][collectives][bidmach]") {
  const int P = 3, absent = 1;
  const std::size_t n = 9;  // blocks of 3, one chunk each
  auto out = dts::test::simulate(dts::test::pinned_star(P, 1e9, 10e-6), P, [&](auto& comm, auto&, auto& o) {
    if (comm.rank() == absent) return;
    dts::CollectiveOnlyCompute compute;
    dts::Vec mine(n, true);
    const std::vector<float> v = contribution(comm.rank(), n);
    std::copy(v.begin(), v.end(), mine.data().begin());
    std::vector<float> got;
    dts::Reactor reactor(comm);
    QuorumRound round(comm, &compute, dts::Group::range(0, P), kTags, 7, QuorumConfig{}, std::move(mine), std::nullopt,
                      [&got](dts::ConstSlice m) { got.assign(m.data.begin(), m.data.end()); });
    round.start(reactor);
    while (!round.retired() || !round.drained()) {
      if (!reactor.run_one(0.5)) round.force();  // half a second without progress
    }
    o["v"] = got;
    o["counts"] = counts_json(round.counts());
    o["t"] = comm.now_s();
  });
  REQUIRE(!out.contains("error"));
  for (int r : {0, 2}) {
    INFO("member " << r);
    // Both force at the same moment: the other's reduced block is still on the way, so only my own block is
    // the mean (of the two contributions that came); the others are my own copy.
    CHECK(out["rank"][r]["counts"] == nlohmann::json({{"chunks", 3}, {"short", 1}, {"missing", 2}, {"forced", true}}));
    for (std::size_t i = 0; i < n; ++i) {
      const auto b = static_cast<int>(i / 3);
      const float want = b == r ? mean_of({0, 2}, i, n) : contribution(r, n)[i];
      CHECK(out["rank"][r]["v"][i].get<float>() == want);
    }
  }
}

TEST_CASE("quorum allreduce: a round on an earlier round's buffers gives what fresh buffers give",
          "[sim][collectives][bidmach]") {
  // Round 1 on other values, its buffers then filled with NaN: a float the second round read before writing
  // would show. Round 2 as the quorum case above (member 2 late, quorums of 3 of 4).
  const int P = 4, late = 2;
  const std::size_t n = 16;
  QuorumConfig cfg;
  cfg.reduce = cfg.complete = 0.75;
  cfg.chunk_floats = 2;
  auto out = dts::test::simulate(dts::test::pinned_star(P, 1e9, 10e-6), P, [&](auto& comm, auto& node, auto& o) {
    dts::CollectiveOnlyCompute compute;
    const dts::Group line = dts::Group::range(0, P);
    dts::collectives::QuorumBuffers buffers;
    std::vector<float> first = contribution(comm.rank() + 7, n);
    dts::collectives::quorum_allreduce(comm, &compute, line, dts::Slice(first), kTags, 1, cfg, std::nullopt, &buffers);
    std::size_t kept = 0;
    for (dts::Vec* b : {&buffers.data, &buffers.contributions, &buffers.out}) {
      const dts::Slice s = b->slice();
      std::fill(s.data.begin(), s.data.end(), std::numeric_limits<float>::quiet_NaN());
      kept += b->count();
    }
    std::vector<float> v = contribution(comm.rank(), n);
    if (comm.rank() == late) node.sleep_for(1.0);
    dts::collectives::quorum_allreduce(comm, &compute, line, dts::Slice(v), kTags, 2, cfg, std::nullopt, &buffers);
    o["v"] = v;
    o["kept"] = kept;
  });
  REQUIRE(!out.contains("error"));
  const auto fresh = run_round(P, n, cfg, late, 1.0);
  for (int r = 0; r < P; ++r) {
    INFO("member " << r);
    CHECK(out["rank"][r]["kept"] == 3 * n);  // the contribution, a block from each member, the output
    CHECK(out["rank"][r]["v"] == fresh["rank"][r]["v"]);
  }
}

namespace {

// One blocking round of `n` modeled floats at `fidelity`, no reductions charged; at the collective fidelity
// every line round runs as flows (budget 0) of `groups` groups, or as messages with the default budget; with
// `nic`, the flows sharing their members' NICs without SimGrid's solver (run.line_round_timing nic).
nlohmann::json run_modeled(int P, std::size_t n, const QuorumConfig& cfg, dts::sim::Fidelity fidelity,
                           std::size_t groups, int late = -1, double delay_s = 0, bool budget = false,
                           bool nic = false) {
  dts::sim::LineRoundTiming lines;
  if (!budget) lines.message_budget = 0;
  lines.groups = groups;
  lines.nic = nic;
  auto out = dts::test::simulate(
      dts::test::pinned_star(P, 1e9, 10e-6), P,
      [&](auto& comm, auto& node, auto& o) {
        if (comm.rank() == late) node.sleep_for(delay_s);
        const QuorumCounts c = dts::collectives::quorum_allreduce(comm, nullptr, dts::Group::range(0, P),
                                                                  dts::Slice({}, n), kTags, 1, cfg);
        o["counts"] = counts_json(c);
        o["sent"] = comm.bytes_sent();
        o["received"] = comm.bytes_received();
        o["t"] = comm.now_s();
      },
      fidelity, {}, 42, lines);
  REQUIRE(!out.contains("error"));
  out.erase("host");
  return out;
}

constexpr auto kMessage = dts::sim::Fidelity::kMessage;
constexpr auto kCollective = dts::sim::Fidelity::kCollective;

}  // namespace

TEST_CASE("line rounds as flows: one group is two phases of one flow each, with the message version's traffic",
          "[sim][collectives][bidmach]") {
  const int P = 4;
  const std::size_t n = 40000;  // blocks of 10,000 floats, 10 chunks each
  const QuorumConfig cfg{1, 1, 1000};
  const auto flows = run_modeled(P, n, cfg, kCollective, 1);
  const auto messages = run_modeled(P, n, cfg, kMessage, 1);
  CHECK(flows["messages"] == messages["messages"]);
  // Each phase: my 3 blocks of 40,000 bytes to my neighbour over two links of 10 us at 1 Gb/s.
  const double phase_s = 2 * 10e-6 + 3 * 40000 * 8 / 1e9;
  for (int r = 0; r < P; ++r) {
    INFO("member " << r);
    CHECK(flows["rank"][r]["t"].get<double>() == Approx(2 * phase_s).epsilon(1e-9));
    CHECK(flows["rank"][r]["sent"] == messages["rank"][r]["sent"]);
    CHECK(flows["rank"][r]["received"] == messages["rank"][r]["received"]);
    CHECK(flows["rank"][r]["counts"] == messages["rank"][r]["counts"]);
    CHECK(flows["rank"][r]["counts"]["missing"] == 0);
  }
}

TEST_CASE("line rounds as flows: quorums of 3 of 4 leave a slow member out, counted as the message version does",
          "[sim][collectives][bidmach]") {
  const int P = 4, late = 2;
  QuorumConfig cfg{0.75, 0.75, 1000};
  const std::size_t n = 40000;
  const std::size_t groups = GENERATE(1, 4, 10);
  INFO(groups << " groups");
  const auto flows = run_modeled(P, n, cfg, kCollective, groups, late, 1.0);
  const auto messages = run_modeled(P, n, cfg, kMessage, groups, late, 1.0);
  for (int r = 0; r < P; ++r) {
    INFO("member " << r);
    CHECK(flows["rank"][r]["counts"] == messages["rank"][r]["counts"]);
    if (r != late) CHECK(flows["rank"][r]["t"].get<double>() < 0.5);
  }
  CHECK(flows["rank"][0]["counts"]["short"] == 10);
  CHECK(flows["rank"][0]["counts"]["missing"] == 10);
}

// The flows carry the bytes, not the message version's per-chunk latency (two chunks in flight per pair): here,
// chunks of 4 KB at 1 Gb/s behind 20 us of latency, the messages take 21.2 ms and the flows 19.3.
TEST_CASE("line rounds as flows: a round takes the message version's time within 10 %", "[sim][collectives][bidmach]") {
  const int P = 4;
  const std::size_t n = 400000;  // 100 chunks a block
  const QuorumConfig cfg{1, 1, 1000};
  const auto messages = run_modeled(P, n, cfg, kMessage, 1);
  for (const std::size_t groups : {1, 4, 16}) {
    const auto flows = run_modeled(P, n, cfg, kCollective, groups);
    for (int r = 0; r < P; ++r) {
      INFO(groups << " groups, member " << r);
      CHECK(flows["rank"][r]["t"].get<double>() == Approx(messages["rank"][r]["t"].get<double>()).epsilon(0.1));
    }
  }
}

TEST_CASE("line rounds as flows: within the message budget a round runs as its messages, to the bit",
          "[sim][collectives][bidmach]") {
  const int P = 4;
  const std::size_t n = 40000;
  const QuorumConfig cfg{0.75, 0.75, 1000};
  CHECK(run_modeled(P, n, cfg, kCollective, 4, 1, 0.01, true) == run_modeled(P, n, cfg, kMessage, 4, 1, 0.01, true));
}

TEST_CASE("line rounds at the NICs: a line's flows as SimGrid shares them, without its solver",
          "[sim][collectives][bidmach]") {
  /* In details:
   *   o a line of 4 on a star (no cross-traffic), each member sending to its neighbour; quorums of 1, and of 3
   *     of 4 with member 2 late by 0.3 ms; one group, or four, whose scatter and reduced flows overlap on a
   *     member's NIC; run.line_round_timing nic against flows
   * Expectations
   *   o bytes, messages and quorum counts equal to the flows'
   *   o every flow's bottleneck is a NIC it shares with flows as limited as itself, where SimGrid's max-min gives
   *     each an equal share, as NicShares does: the same end times (1e-9)
   */
  const int P = 4;
  const std::size_t n = 400000;
  const std::size_t groups = GENERATE(1, 4);
  const auto [quorum, late] = GENERATE(table<double, int>({{1.0, -1}, {0.75, 2}}));
  const QuorumConfig cfg{quorum, quorum, 1000};
  INFO(groups << " groups, quorums " << quorum);
  const auto flows = run_modeled(P, n, cfg, kCollective, groups, late, 3e-4);
  const auto nic = run_modeled(P, n, cfg, kCollective, groups, late, 3e-4, false, true);
  for (int r = 0; r < P; ++r) {
    INFO("member " << r);
    CHECK(nic["rank"][r]["t"].get<double>() == Approx(flows["rank"][r]["t"].get<double>()).epsilon(1e-9));
    CHECK(nic["rank"][r]["counts"] == flows["rank"][r]["counts"]);
    CHECK(nic["rank"][r]["sent"] == flows["rank"][r]["sent"]);
  }
  CHECK(nic["messages"] == flows["messages"]);
}
