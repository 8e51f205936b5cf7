// BIDMach's grid layout (algorithms/bidmach/grid_layout.hpp, papers/bidmach.md §6.2): the reference layouts,
// the fill order, and the invariant the specification asks to test: for every n, row populations within 1 of
// each other and column populations too, by joins and through seeded random joins and leaves. Each layout is
// also checked for consistency (every node where cell() says, side = ceil(sqrt n), every non-empty line
// mastered by one of its members at the diagonal or by the corner rule) and for the occupied cells of the
// join-order layout with the same n.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <random>
#include <stdexcept>

#include "algorithms/bidmach/grid_layout.hpp"

using dts::bidmach::Cell;
using dts::bidmach::Dim;
using dts::bidmach::GridLayout;

namespace {

GridLayout joined(int n) {
  GridLayout g;
  for (int id = 0; id < n; ++id) g.join(id);
  return g;
}

int ceil_sqrt(int n) {
  int L = 0;
  while (L * L < n) ++L;
  return L;
}

std::vector<bool> occupied(const GridLayout& g) {
  std::vector<bool> mask;
  for (int r = 0; r < g.side(); ++r) {
    for (int c = 0; c < g.side(); ++c) mask.push_back(g.at(r, c) != -1);
  }
  return mask;
}

std::vector<int> masters(const GridLayout& g, Dim d) {
  std::vector<int> out;
  for (int i = 0; i < g.side(); ++i) out.push_back(g.line_master(d, i));
  return out;
}

// Everything the layout promises for the node set `ids`.
void check_layout(const GridLayout& g, const std::vector<int>& ids) {
  INFO("layout " << g.to_string());
  const int n = static_cast<int>(ids.size()), L = g.side();
  REQUIRE(g.nodes() == n);
  REQUIRE(L == ceil_sqrt(n));
  int cells = 0;
  for (int id : ids) {
    const auto c = g.cell(id);
    REQUIRE(c.has_value());
    REQUIRE(g.at(c->row, c->col) == id);
  }
  for (bool o : occupied(g)) cells += o ? 1 : 0;
  REQUIRE(cells == n);
  for (Dim d : {Dim::kRow, Dim::kColumn}) {
    INFO((d == Dim::kRow ? "rows" : "columns"));
    std::vector<std::size_t> sizes;
    for (int i = 0; i < L; ++i) {
      const std::vector<int> members = g.line(d, i);
      sizes.push_back(members.size());
      const int m = g.line_master(d, i);
      REQUIRE((m == -1) == members.empty());
      if (m == -1) continue;
      REQUIRE(std::count(members.begin(), members.end(), m) == 1);
      const bool corner_rule = i == L - 1 && g.at(i, i) == -1;
      const Cell expect = !corner_rule ? Cell{i, i} : d == Dim::kRow ? Cell{i, 0} : Cell{0, i};
      REQUIRE(g.cell(m) == expect);
    }
    if (!sizes.empty())
      REQUIRE(*std::max_element(sizes.begin(), sizes.end()) - *std::min_element(sizes.begin(), sizes.end()) <= 1);
  }
  REQUIRE(occupied(g) == occupied(joined(n)));  // the shape depends on n alone
}

}  // namespace

TEST_CASE("GridLayout: the reference layouts of §6.2 and their line masters", "[unit][bidmach]") {
  CHECK(joined(0).to_string() == "[]");
  CHECK(joined(1).to_string() == "[0]");
  CHECK(joined(4).to_string() == "[0 2; 3 1]");
  CHECK(joined(9).to_string() == "[0 7 2; 8 1 4; 3 5 6]");
  CHECK(joined(16).to_string() == "[0 12 2 7; 13 1 9 4; 3 10 6 14; 8 5 15 11]");
  CHECK(masters(joined(16), Dim::kRow) == std::vector<int>{0, 1, 6, 11});
  CHECK(masters(joined(16), Dim::kColumn) == std::vector<int>{0, 1, 6, 11});
  // n = 10: side 4 with the corner still empty, so row 3 is mastered by (3,0) and column 3 by (0,3).
  const GridLayout g = joined(10);
  CHECK(g.to_string() == "[0 . 2 7; . 1 9 4; 3 . 6 .; 8 5 . .]");
  CHECK(masters(g, Dim::kRow) == std::vector<int>{0, 1, 6, 8});
  CHECK(masters(g, Dim::kColumn) == std::vector<int>{0, 1, 6, 7});
  CHECK(g.line(Dim::kRow, 3) == std::vector<int>{8, 5});
  CHECK(g.line(Dim::kColumn, 2) == std::vector<int>{2, 9, 6});
}

TEST_CASE("GridLayout: the fill order of §6.2 for odd and even sides", "[unit][bidmach]") {
  const auto order = [](int side) {
    std::vector<std::pair<int, int>> out;
    for (int k = 0; k < 2 * side - 1; ++k)
      out.emplace_back(GridLayout::fill_cell(k, side).row, GridLayout::fill_cell(k, side).col);
    return out;
  };
  using P = std::vector<std::pair<int, int>>;
  CHECK(order(1) == P{{0, 0}});
  CHECK(order(2) == P{{1, 1}, {0, 1}, {1, 0}});
  CHECK(order(4) == P{{1, 2}, {2, 1}, {3, 3}, {0, 1}, {1, 0}, {2, 3}, {3, 2}});
  CHECK(order(5) == P{{1, 2}, {2, 1}, {3, 4}, {4, 3}, {4, 4}, {0, 1}, {1, 0}, {2, 3}, {3, 2}});
}

TEST_CASE("GridLayout: balanced for every n = 1..64 built by joins", "[unit][bidmach]") {
  GridLayout g;
  std::vector<int> ids;
  for (int id = 0; id < 64; ++id) {
    g.join(id);
    ids.push_back(id);
    check_layout(g, ids);
  }
}

TEST_CASE("GridLayout: balanced through seeded random joins and leaves, down to 0 and up again", "[unit][bidmach]") {
  /* In details:
   *   o 3000 random steps per seed between 0 and 64 nodes; a leave takes the most recent joiner, the oldest, the
   *     master of a random line, or a random node; a join brings a new id or one that left before
   *   o then every node leaves in random order, and 64 join again
   * Expectations
   *   o check_layout after every step */
  const unsigned seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  const auto pick = [&rng](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  GridLayout g;
  std::deque<int> present;  // in join order
  std::vector<int> gone;
  int next_id = 0;
  const auto ids = [&present] { return std::vector<int>(present.begin(), present.end()); };
  const auto join = [&](int id) {
    g.join(id);
    present.push_back(id);
  };
  const auto leave = [&](int id) {
    g.leave(id);
    present.erase(std::find(present.begin(), present.end(), id));
    gone.push_back(id);
  };
  for (int step = 0; step < 3000; ++step) {
    const int n = g.nodes();
    const bool grow = n == 0 || (n < 64 && pick(2) == 0);
    if (grow && !gone.empty() && pick(3) == 0) {
      const std::size_t k = pick(gone.size());
      join(gone[k]);
      gone.erase(gone.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (grow) {
      join(next_id++);
    } else {
      const std::size_t how = pick(4);
      const Dim d = pick(2) == 0 ? Dim::kRow : Dim::kColumn;
      leave(how == 0   ? present.back()
            : how == 1 ? present.front()
            : how == 2 ? g.line_master(d, static_cast<int>(pick(static_cast<std::size_t>(g.side()))))
                       : present[pick(present.size())]);
    }
    check_layout(g, ids());
  }
  while (!present.empty()) {
    leave(present[pick(present.size())]);
    check_layout(g, ids());
  }
  CHECK(g.to_string() == "[]");
  for (int k = 0; k < 64; ++k) {
    join(next_id++);
    check_layout(g, ids());
  }
}

TEST_CASE("GridLayout: nodes that leave and join again give a balanced grid of the same shape", "[unit][bidmach]") {
  GridLayout g = joined(30);
  std::vector<int> ids(30);
  for (int id = 0; id < 30; ++id) ids[static_cast<std::size_t>(id)] = id;
  for (int id : {0, 1, 6, 29, 13, 17, 22}) g.leave(id);  // masters, the newest, others
  CHECK(g.side() == 5);
  for (int id : {22, 0, 17, 1, 29, 6, 13}) g.join(id);
  check_layout(g, ids);
}

TEST_CASE("GridLayout: growing past a full grid and shrinking back returns the previous layout", "[unit][bidmach]") {
  const int n = GENERATE(1, 4, 9, 16, 25);
  const int L = ceil_sqrt(n);
  GridLayout g = joined(n);
  const std::string before = g.to_string();
  g.join(n);
  CHECK(g.side() == L + 1);
  g.leave(n);  // the newest: the exact previous layout
  CHECK(g.side() == L);
  CHECK(g.to_string() == before);
  g.join(n);
  g.leave(0);  // an older node, the master of row and column 0: the same side, its cell taken by n
  CHECK(g.side() == L);
  CHECK(g.at(0, 0) == n);
}

TEST_CASE("GridLayout: an absent node, a present id, indices outside the grid", "[unit][bidmach]") {
  GridLayout g = joined(5);
  try {
    g.leave(7);
    FAIL("leave of an absent node did not throw");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("node 7"));
  }
  CHECK_THROWS_AS(g.join(3), std::invalid_argument);
  CHECK_THROWS_AS(g.join(-1), std::invalid_argument);
  CHECK_THROWS_AS(g.at(3, 0), std::out_of_range);
  CHECK_THROWS_AS(g.line(Dim::kColumn, -1), std::out_of_range);
  CHECK(!g.cell(7).has_value());
  CHECK(g.nodes() == 5);
  CHECK(GridLayout().side() == 0);
}
