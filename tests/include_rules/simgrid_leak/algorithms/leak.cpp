// A file of algorithms/ that includes SimGrid, beside includes it may make: the tree the include rules must
// refuse (tests/CMakeLists.txt: include_rules_catch_simgrid). Never compiled.
#include <simgrid/s4u.hpp>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "kernels/model/network.hpp"
