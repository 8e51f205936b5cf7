// GossipGraD's partner schedule (algorithms/gossipgrad_schedule.hpp): the properties papers/gossipgrad.md
// §4-5 derive and G10 checks. Every step is a permutation (one message out and one in per node, in-degree
// 1) whatever p; with p a power of two one round of pure pairwise averaging gives every node the exact mean
// under both patterns; without rotation the direct partners repeat (log2 p received from, 2 log2 p - 1 in all
// under dissemination); with rotation they grow toward p - 1.
#include <catch2/catch.hpp>

#include <set>

#include "algorithms/gossipgrad_schedule.hpp"
#include "core/errors.hpp"

using dts::GossipGradSchedule;
using dts::GossipPattern;
using dts::Rank;

namespace {

// One round from step `first` of x_i <- (x_i + x_recv_from(i)) / 2, every node at once. Values are exact
// dyadic numbers (multiples of 2^-L of integers), so doubles hold every intermediate exactly.
std::vector<double> average_round(const GossipGradSchedule& s, std::int64_t first, std::vector<double> x) {
  for (std::int64_t t = first; t < first + s.steps_per_round(); ++t) {
    std::vector<double> next(x.size());
    for (int i = 0; i < s.size(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      next[u] = 0.5 * (x[u] + x[static_cast<std::size_t>(s.partners(i, t).recv_from)]);
    }
    x = next;
  }
  return x;
}

std::vector<double> spread_values(int p) {
  std::vector<double> x(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) x[static_cast<std::size_t>(i)] = (i * 37 % p) * 3.0 + (i == 0 ? 100 : 0);
  return x;
}

}  // namespace

TEST_CASE("gossipgrad schedule: every step is a permutation, one message out and one in per node", "[unit]") {
  const int p = GENERATE(1, 2, 3, 6, 8, 13, 16);
  const bool rotate = GENERATE(false, true);
  for (const auto pattern : {GossipPattern::kDissemination, GossipPattern::kHypercube}) {
    if (pattern == GossipPattern::kHypercube && (p & (p - 1)) != 0) continue;
    const GossipGradSchedule s(p, pattern, rotate, 3);
    INFO("p " << p << " rotate " << rotate << " hypercube " << (pattern == GossipPattern::kHypercube));
    for (std::int64_t t = 0; t < 4 * std::max(1, s.steps_per_round()) * 3; ++t) {
      std::multiset<Rank> to, from;
      for (int i = 0; i < p; ++i) {
        const auto pr = s.partners(i, t);
        if (p == 1) {
          REQUIRE(pr.send_to == -1);
          continue;
        }
        REQUIRE(pr.send_to != i);
        REQUIRE(pr.recv_from != i);
        REQUIRE(s.partners(pr.send_to, t).recv_from == i);  // my message is the one my partner receives
        if (pattern == GossipPattern::kHypercube) REQUIRE(pr.send_to == pr.recv_from);
        to.insert(pr.send_to);
        from.insert(pr.recv_from);
      }
      if (p > 1) {
        REQUIRE(std::set<Rank>(to.begin(), to.end()).size() == static_cast<std::size_t>(p));  // in-degree 1
        REQUIRE(std::set<Rank>(from.begin(), from.end()).size() == static_cast<std::size_t>(p));
      }
    }
  }
}

TEST_CASE("gossipgrad schedule: one round of pure averaging gives every node the exact mean (p = 2^L)", "[unit]") {
  const int p = GENERATE(2, 4, 8, 16, 64);
  const auto pattern = GENERATE(GossipPattern::kDissemination, GossipPattern::kHypercube);
  const GossipGradSchedule s(p, pattern, true, 11);
  const auto x = spread_values(p);
  double mean = 0;
  for (const double v : x) mean += v / p;
  for (const std::int64_t round : {0, 1, 5}) {  // the identity communicator and rotated ones
    const auto y = average_round(s, round * s.steps_per_round(), x);
    for (const double v : y) REQUIRE(v == mean);
  }
  // One step short of a round is not enough.
  if (p > 2) {
    auto y = x;
    for (std::int64_t t = 0; t + 1 < s.steps_per_round(); ++t) {
      std::vector<double> next(y.size());
      for (int i = 0; i < p; ++i) next[i] = 0.5 * (y[i] + y[s.partners(i, t).recv_from]);
      y = next;
    }
    bool all_mean = true;
    for (const double v : y) all_mean = all_mean && v == mean;
    REQUIRE(!all_mean);
  }
}

TEST_CASE("gossipgrad schedule: p not a power of two runs ceil(log2 p) dissemination steps, not exact", "[unit]") {
  const GossipGradSchedule s(6, GossipPattern::kDissemination, false, 1);
  REQUIRE(!s.power_of_two());
  REQUIRE(s.steps_per_round() == 3);
  const auto y = average_round(s, 0, spread_values(6));
  double mean = 0;
  for (const double v : spread_values(6)) mean += v / 6;
  bool all_mean = true;
  for (const double v : y) all_mean = all_mean && std::abs(v - mean) < 1e-9;
  REQUIRE(!all_mean);
  REQUIRE_THROWS_AS(GossipGradSchedule(6, GossipPattern::kHypercube, true, 1, "exp.json:/algorithm/pattern"),
                    dts::ConfigError);
  REQUIRE_THROWS_WITH(GossipGradSchedule(12, GossipPattern::kHypercube, true, 1, "exp.json:/algorithm/pattern"),
                      Catch::Contains("/algorithm/pattern") && Catch::Contains("power-of-two"));
}

TEST_CASE("gossipgrad schedule: rotation grows each node's direct partners toward p - 1", "[unit]") {
  /* Without rotation the partners repeat every round: log2 p nodes to receive from, and 2 log2 p - 1 in all
   * under dissemination (the last step's two partners coincide), log2 p under hypercube. With rotation every
   * node has met every other one directly after p rounds (p = 16, seed 1), and the count never falls. */
  const int p = 16, L = 4;
  for (const auto pattern : {GossipPattern::kDissemination, GossipPattern::kHypercube}) {
    const bool dissemination = pattern == GossipPattern::kDissemination;
    const GossipGradSchedule fixed(p, pattern, false, 1), rotated(p, pattern, true, 1);
    for (int i = 0; i < p; ++i) {
      std::set<Rank> from, all;
      for (std::int64_t t = 0; t < 10 * L; ++t) {
        const auto pr = fixed.partners(i, t);
        from.insert(pr.recv_from);
        all.insert(pr.recv_from);
        all.insert(pr.send_to);
      }
      REQUIRE(from.size() == static_cast<std::size_t>(L));
      REQUIRE(all.size() == static_cast<std::size_t>(dissemination ? 2 * L - 1 : L));
      std::set<Rank> met;
      std::size_t after_one_round = 0;
      for (std::int64_t t = 0; t < p * L; ++t) {
        const std::size_t before = met.size();
        const auto pr = rotated.partners(i, t);
        met.insert(pr.recv_from);
        met.insert(pr.send_to);
        REQUIRE(met.size() >= before);
        if (t + 1 == L) after_one_round = met.size();
      }
      REQUIRE(after_one_round == all.size());  // round 0 is the identity communicator
      REQUIRE(met.size() == static_cast<std::size_t>(p - 1));
    }
  }
}

TEST_CASE("gossipgrad schedule: partners do not depend on the order of the queries", "[unit]") {
  // The communicators are built lazily and only a few are kept: a late query rebuilds the same one.
  const GossipGradSchedule a(32, GossipPattern::kDissemination, true, 9), b(32, GossipPattern::kDissemination, true, 9);
  std::vector<std::pair<Rank, Rank>> forward, backward;
  for (std::int64_t t = 0; t < 200; ++t) forward.emplace_back(a.partners(7, t).send_to, a.partners(7, t).recv_from);
  for (std::int64_t t = 199; t >= 0; --t) backward.emplace_back(b.partners(7, t).send_to, b.partners(7, t).recv_from);
  std::reverse(backward.begin(), backward.end());
  REQUIRE(forward == backward);
  REQUIRE(a.communicator(5 * 31) == 31);
  REQUIRE(a.communicator(5 * 32) == 0);  // the schedule repeats every p L steps
}
