// The gossip family's choice function (algorithms/gossip_choice.hpp): the thesis's peer formula, Bernoulli(p)
// per worker and update, the period counted from update 1, and the distribution of |K_i| of
// papers/elastic_gossip.md §7 (Monte-Carlo there; here too, to 0.01).
#include <catch2/catch.hpp>

#include <array>
#include <map>

#include "algorithms/gossip_choice.hpp"

namespace dts {
namespace {

TEST_CASE("gossip_choice: another worker or none, the same on every call, uniform over the others", "[gossip]") {
  const int W = GENERATE(2, 5, 8);
  const GossipSchedule s{1.0, 1, 1234};
  std::map<Rank, int> hits;
  const int updates = 4000;
  for (std::int64_t u = 1; u <= updates; ++u) {
    for (Rank i = 0; i < W; ++i) {
      const Rank c = gossip_choice(s, W, i, u);
      REQUIRE(c == gossip_choice(s, W, i, u));
      REQUIRE(c >= 0);
      REQUIRE(c < W);
      REQUIRE(c != i);
      if (i == 0) ++hits[c];
    }
  }
  REQUIRE(hits.size() == static_cast<std::size_t>(W - 1));
  for (const auto& [peer, n] : hits) CHECK(n == Approx(updates / (W - 1.0)).epsilon(0.1));
  CHECK(gossip_choice(s, 1, 0, 1) == -1);  // nobody to talk to
}

TEST_CASE("gossip_choice: the period divides the update counter, which starts at 1", "[gossip]") {
  const GossipSchedule s{1.0, 4, 7};
  for (std::int64_t u = 1; u <= 40; ++u) CHECK((gossip_choice(s, 4, 2, u) >= 0) == (u % 4 == 0));
}

TEST_CASE("gossip_choice: Bernoulli(p), independently per worker, and the peer the same whatever p", "[gossip]") {
  const GossipSchedule all{1.0, 1, 9}, some{0.25, 1, 9};
  int talk = 0, both = 0;
  const int updates = 20000;
  for (std::int64_t u = 1; u <= updates; ++u) {
    const Rank a = gossip_choice(some, 4, 0, u), b = gossip_choice(some, 4, 1, u);
    talk += a >= 0 ? 1 : 0;
    both += a >= 0 && b >= 0 ? 1 : 0;
    if (a >= 0) REQUIRE(a == gossip_choice(all, 4, 0, u));
  }
  CHECK(talk / double(updates) == Approx(0.25).margin(0.01));
  CHECK(both / double(updates) == Approx(0.0625).margin(0.005));
}

TEST_CASE("gossip_partners: own choice and the choosers, a set", "[gossip]") {
  const std::vector<Rank> c{1, 0, 0, -1, 2};
  CHECK(gossip_partners(c, 0) == std::vector<Rank>{1, 2});  // mutual choice with 1 counts once
  CHECK(gossip_choosers(c, 0) == std::vector<Rank>{1, 2});
  CHECK(gossip_partners(c, 2) == std::vector<Rank>{0, 4});
  CHECK(gossip_partners(c, 3).empty());
  CHECK(gossip_partners(c, 4) == std::vector<Rank>{2});
}

TEST_CASE("gossip_partners: the distribution of |K_i| of the specification's table", "[gossip]") {
  struct Row {
    int W;
    double p;
    std::array<double, 4> probs;  // |K| = 0, 1, 2, >= 3
  };
  // papers/elastic_gossip.md §7.
  const Row row = GENERATE(Row{4, 1.0, {0, 0.444, 0.445, 0.111}}, Row{4, 0.5, {0.290, 0.521, 0.173, 0.016}},
                           Row{4, 0.125, {0.770, 0.215, 0.0146, 0.0003}}, Row{4, 0.03125, {0.938, 0.061, 0.0009, 0}},
                           Row{8, 1.0, {0, 0.396, 0.397, 0.206}}, Row{8, 0.125, {0.773, 0.209, 0.0177, 0.0007}});
  INFO("W " << row.W << ", p " << row.p);
  GossipChoiceCache cache({row.p, 1, 1234});
  std::array<double, 4> freq{};
  const int updates = 40000;
  for (std::int64_t u = 1; u <= updates; ++u) {
    const auto& c = *cache.choices(row.W, u);
    for (Rank i = 0; i < row.W; ++i) freq[std::min<std::size_t>(gossip_partners(c, i).size(), 3)] += 1;
  }
  for (std::size_t k = 0; k < 4; ++k) CHECK(freq[k] / (updates * row.W) == Approx(row.probs[k]).margin(0.01));
}

}  // namespace
}  // namespace dts
