// MPCA SGD's elementwise rules (papers/mpca_sgd.md §4.3-4.5): pure, no time; no-ops on modeled slices.
#pragma once

#include "algorithms/api/vec.hpp"

namespace dts::mpca {

// The driver update of one shard (Eq. 8) and its extrapolation (Eq. 4-5): `old` <- x~, x~ <- (1 - beta) x~ +
// beta R, v <- delta v + (1 - delta) (x~ - old), x* <- x~ + gamma v. v uses joint models only, never x*.
// gamma = 0 broadcasts x~ itself, bit for bit.
void driver_update(Slice joint, Slice old, ConstSlice reduced, float beta);
void extrapolate(Slice xstar, Slice v, ConstSlice joint, ConstSlice old, float delta, float gamma);

// The worker's elastic pull of Eq. 7, x <- x - alpha (x - target), before the step at the displaced point.
void displace(Slice x, ConstSlice target, float alpha);
// Eq. 6's penalty gradient, g += alpha (x - target).
void add_penalty_gradient(Slice grad, ConstSlice x, ConstSlice target, float alpha);

}  // namespace dts::mpca
