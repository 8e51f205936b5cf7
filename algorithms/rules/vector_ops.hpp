// Pure elementwise rules over Slices (BIDMach's binder): no communication, no time. Each is a no-op on
// modeled (data-less) slices, so algorithms call them unconditionally; sizes are checked either way.
#pragma once

#include "algorithms/api/vec.hpp"

namespace dts::rules {

// y += a * x
void axpy(Slice y, float a, ConstSlice x);
// x *= a
void scale(Slice x, float a);
// dst = src
void copy(Slice dst, ConstSlice src);
// diff = alpha * (x - center): the elastic difference of EASGD (Zhang et al. 2015, eq. 2-3).
void elastic_diff(Slice diff, ConstSlice x, ConstSlice center, float alpha);

}  // namespace dts::rules
