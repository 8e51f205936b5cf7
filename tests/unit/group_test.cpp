// Group: index lookup for ranges and for any order, and the members' hash that keys collectives.
#include <catch2/catch.hpp>

#include "algorithms/api/group.hpp"

namespace dts {
namespace {

TEST_CASE("Group::index_of: ranges, ranges built by hand, and members in any order", "[group]") {
  const Group range = Group::range(3, 4);
  const Group again = Group::range(3, 4);  // the list kept from the call before: its first rank given, no scan
  const Group listed({3, 4, 5, 6});
  const Group shuffled({5, 3, 6, 4});
  for (Rank r = 0; r < 10; ++r) {
    const int expected = r >= 3 && r <= 6 ? r - 3 : -1;
    CHECK(range.index_of(r) == expected);
    CHECK(again.index_of(r) == expected);
    CHECK(listed.index_of(r) == expected);
  }
  CHECK(shuffled.index_of(5) == 0);
  CHECK(shuffled.index_of(3) == 1);
  CHECK(shuffled.index_of(4) == 3);
  CHECK(shuffled.index_of(7) == -1);
  CHECK(Group({2, 4}).index_of(3) == -1);  // ascending, but not consecutive
  CHECK(Group({2, 4}).index_of(4) == 1);
  CHECK(Group::range(0, 0).index_of(0) == -1);
}

TEST_CASE("Group::hash: the members in order, however the group was built", "[group]") {
  const std::vector<Rank> members{0, 1, 2, 3};
  CHECK(Group::range(0, 4).hash() == hash_ranks(members));
  CHECK(Group(members).hash() == Group::range(0, 4).hash());
  CHECK(Group({1, 0, 2, 3}).hash() != Group::range(0, 4).hash());  // order matters: group indices differ
  CHECK(Group::range(0, 3).hash() != Group::range(0, 4).hash());
}

TEST_CASE("Group::range: equal ranges share one list of members; a moved-from group stays whole", "[group]") {
  Group a = Group::range(0, 1000);
  const Group b = Group::range(0, 1000);
  CHECK(a.members().data() == b.members().data());  // every rank's group of all ranks: one list, not P
  const Group other = Group::range(1, 1000);
  CHECK(other.members().data() != a.members().data());
  CHECK(other.world_rank(0) == 1);
  CHECK(Group::range(0, 999).size() == 999);
  CHECK(Group::range(0, 999).hash() == Group(std::vector<Rank>(b.members().begin(), b.members().end() - 1)).hash());
  const Group moved = std::move(a);
  CHECK(moved.size() == 1000);
  CHECK(a.size() == 1000);  // NOLINT(bugprone-use-after-move): the point of the check
  CHECK(a.index_of(999) == 999);
}

}  // namespace
}  // namespace dts
