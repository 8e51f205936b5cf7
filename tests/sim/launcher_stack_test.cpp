// raise_stack_limit (run_simulation's first call): the main stack, on which SimGrid 3.32's solver recurses
// once per link and flow of a connected set (a ring of 65,536 workers overflowed 8 MiB), may grow to 512 MiB.
#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include "sim/launcher.hpp"

TEST_CASE("raise_stack_limit: the stack's soft limit is at least 512 MiB, or the hard limit", "[sim]") {
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_STACK, &before) == 0);
  dts::sim::raise_stack_limit();
  rlimit after{};
  REQUIRE(getrlimit(RLIMIT_STACK, &after) == 0);
  if (before.rlim_cur == RLIM_INFINITY) {  // nothing to raise
    CHECK(after.rlim_cur == RLIM_INFINITY);
    return;
  }
  const rlim_t want = rlim_t{512} << 20;
  REQUIRE(after.rlim_cur >= std::min(want, before.rlim_max));
  REQUIRE(after.rlim_max == before.rlim_max);
  setrlimit(RLIMIT_STACK, &before);  // as it was, for the other tests
}
