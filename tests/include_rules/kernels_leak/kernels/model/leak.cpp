// A file of kernels/ that includes the seam above it, beside includes it may make: the tree the include rules
// must refuse (tests/CMakeLists.txt: include_rules_catch_kernels). Never compiled.
#include <vector>

#include "algorithms/api/comm.hpp"
#include "core/errors.hpp"
#include "kernels/model/network.hpp"
