// `dtsim list`.
#pragma once

#include <string>

namespace dts::exp {
// Prints algorithms, models, data sets and, with the simulator, the platforms and devices of `source_dir`.
void list_catalog(const std::string& source_dir);
}  // namespace dts::exp
