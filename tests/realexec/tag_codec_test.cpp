// The MPI backend's envelope in an MPI tag (realexec/tag_codec.hpp): round trips, and the limits, said.
#include <catch2/catch.hpp>

#include "core/errors.hpp"
#include "realexec/tag_codec.hpp"

using dts::mpi::TagCodec;

TEST_CASE("mpi::TagCodec: tag and round survive the MPI tag, up to the limits MPI_TAG_UB leaves", "[mpi]") {
  const TagCodec wide(2147483647);  // Open MPI's and MPICH's MPI_TAG_UB
  REQUIRE(wide.max_round() == 524287);
  for (const auto& [tag, round] : {std::pair<dts::Tag, dts::Round>{0, 0}, {4095, 0}, {7, 1}, {4095, 524287}}) {
    const int m = wide.encode(tag, round);
    REQUIRE(m >= 0);
    REQUIRE(wide.decode(m) == std::make_pair(tag, round));
  }
  const TagCodec least(32767);  // the least MPI promises
  REQUIRE(least.max_round() == 7);
  REQUIRE(least.encode(4095, 7) == 32767);
  REQUIRE_THROWS_WITH(least.encode(5, 8), Catch::Contains("tag 5 and round 8 does not fit") &&
                                              Catch::Contains("MPI_TAG_UB = 32767") &&
                                              Catch::Contains("tags 0-4095 and rounds 0-7"));
  REQUIRE_THROWS_AS(wide.encode(4096, 0), dts::CommError);
  REQUIRE_THROWS_AS(wide.encode(-1, 0), dts::CommError);
}
