// Gossiping SGD's peer schedule (algorithms/gossip_sgd.cpp), exposed for its tests.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/api/comm.hpp"

namespace dts {

// The peer of each of P workers at `step`: a random perfect matching drawn from (seed, step), the same on
// every rank; peer[i] == j iff peer[j] == i; -1 for the one worker left out when P is odd.
std::vector<Rank> gossip_peers(int P, std::uint64_t seed, std::int64_t step);

}  // namespace dts
