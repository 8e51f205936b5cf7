// The scenario's compute stretch (both backends charge it), its jitter draws and its draw of ranks.
#include "algorithms/api/scenario.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

namespace {

dts::Scenario one_straggler(double factor, double from_s, double until_s) {
  dts::Scenario s;
  s.stragglers.push_back({{2}, factor, from_s, until_s});
  return s;
}

}  // namespace

TEST_CASE("Scenario::stretch slows only the named ranks, only inside the window", "[unit]") {
  const dts::Scenario s = one_straggler(3.0, 10.0, 20.0);
  CHECK(s.slows(2));
  CHECK_FALSE(s.slows(1));
  CHECK(s.stretch(1, 0, 12.0, 1.0) == 1.0);  // another rank
  CHECK(s.stretch(2, 0, 2.0, 1.0) == 1.0);   // before the window
  CHECK(s.stretch(2, 0, 20.0, 1.0) == 1.0);  // from its end on
  CHECK(s.stretch(2, 0, 12.0, 1.0) == 3.0);  // inside
  // Begun 1 s before the window: 1 s at full speed, then the rest (1 s of work) at a third of it.
  CHECK(s.stretch(2, 0, 9.0, 2.0) == Approx(1.0 + 3.0).epsilon(1e-15));
  // Begun inside, 1 s before the end: a third of a second of work done by the end, the rest at full speed.
  CHECK(s.stretch(2, 0, 19.0, 1.0) == Approx(1.0 + 2.0 / 3.0).epsilon(1e-15));
  // Spanning the whole window: 10 s of window do 10/3 s of work.
  CHECK(s.stretch(2, 0, 5.0, 15.0) == Approx(15.0 + 10.0 * (1 - 1.0 / 3.0)).epsilon(1e-15));
}

TEST_CASE("Scenario::stretch multiplies overlapping windows' factors", "[unit]") {
  dts::Scenario s = one_straggler(2.0, 0.0, dts::kNever);
  s.stragglers.push_back({{2, 3}, 5.0, 1.0, 2.0});
  CHECK(s.stretch(2, 0, 1.0, 0.1) == Approx(1.0).epsilon(1e-15));  // 2 x 5
  // Only the second window: its last 0.5 s do 0.1 s of work, the rest goes at full speed.
  CHECK(s.stretch(3, 0, 1.5, 1.0) == Approx(0.5 + 0.9).epsilon(1e-15));
  CHECK(s.stretch(2, 0, 3.0, 1.0) == Approx(2.0).epsilon(1e-15));
}

TEST_CASE("Scenario jitter: the same draws for the same seed, other draws for another seed", "[unit]") {
  dts::Scenario s;
  s.seed = 42;
  s.jitter.push_back({{0, 1}, dts::Jitter::Model::kTwoPoint, 0, 0.25, 4.0});
  int slow = 0;
  const int steps = 20000;
  for (int k = 0; k < steps; ++k) {
    const double f = s.jitter_factor(1, k);
    REQUIRE((f == 1.0 || f == 4.0));
    slow += f == 4.0 ? 1 : 0;
    REQUIRE(s.stretch(1, k, 0.0, 0.5) == 0.5 * f);
  }
  CHECK(slow == Approx(0.25 * steps).margin(4 * std::sqrt(steps * 0.25 * 0.75)));
  CHECK(s.jitter_factor(2, 7) == 1.0);  // a rank it does not name

  dts::Scenario same = s, other = s;
  other.seed = 43;
  int differ = 0;
  for (int k = 0; k < 200; ++k) {
    REQUIRE(same.jitter_factor(0, k) == s.jitter_factor(0, k));
    differ += other.jitter_factor(0, k) != s.jitter_factor(0, k) ? 1 : 0;
  }
  CHECK(differ > 20);
  // Ranks draw independently.
  int ranks_differ = 0;
  for (int k = 0; k < 200; ++k) ranks_differ += s.jitter_factor(0, k) != s.jitter_factor(1, k) ? 1 : 0;
  CHECK(ranks_differ > 20);
}

TEST_CASE("Scenario jitter: lognormal factors have median 1 and the given spread", "[unit]") {
  dts::Scenario s;
  s.seed = 7;
  s.jitter.push_back({{0}, dts::Jitter::Model::kLognormal, 0.5, 0, 1});
  std::vector<double> logs;
  for (int k = 0; k < 20000; ++k) logs.push_back(std::log(s.jitter_factor(0, k)));
  std::sort(logs.begin(), logs.end());
  CHECK(logs[logs.size() / 2] == Approx(0.0).margin(0.02));
  double sq = 0;
  for (const double l : logs) sq += l * l;
  CHECK(std::sqrt(sq / static_cast<double>(logs.size())) == Approx(0.5).epsilon(0.03));
}

TEST_CASE("draw_ranks: a fraction of the workers, from the seed", "[unit]") {
  const std::vector<dts::Rank> a = dts::draw_ranks(0.375, 8, 1, 42);  // 3 of workers 1..8 (rank 0 a server)
  REQUIRE(a.size() == 3);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(std::adjacent_find(a.begin(), a.end()) == a.end());
  for (const dts::Rank r : a) CHECK((r >= 1 && r <= 8));
  CHECK(dts::draw_ranks(0.375, 8, 1, 42) == a);
  bool changes = false;
  for (std::uint64_t seed = 0; seed < 10 && !changes; ++seed) changes = dts::draw_ranks(0.375, 8, 1, seed) != a;
  CHECK(changes);
  CHECK(dts::draw_ranks(0.0, 8, 0, 1).empty());
  CHECK(dts::draw_ranks(1.0, 4, 0, 1) == std::vector<dts::Rank>{0, 1, 2, 3});
  CHECK(dts::draw_ranks(0.5, 3, 0, 1).size() == 2);  // rounded to the nearest count
}
