// MPCA SGD's elementwise rules (update_rules.hpp).
#include "algorithms/mpca/update_rules.hpp"

#include <cstddef>

#include "algorithms/rules/vector_ops.hpp"

namespace dts::mpca {
namespace {
bool modeled(ConstSlice a) { return a.data.empty(); }
}  // namespace

void driver_update(Slice joint, Slice old, ConstSlice reduced, float beta) {
  DTS_ASSERT(joint.count == old.count && joint.count == reduced.count, "mpca: driver update sizes differ");
  if (modeled(joint) || modeled(reduced)) return;
  rules::copy(old, joint);
  for (std::size_t i = 0; i < joint.count; ++i) joint.data[i] = (1 - beta) * joint.data[i] + beta * reduced.data[i];
}

void extrapolate(Slice xstar, Slice v, ConstSlice joint, ConstSlice old, float delta, float gamma) {
  DTS_ASSERT(xstar.count == joint.count && v.count == joint.count && old.count == joint.count,
             "mpca: extrapolation sizes differ");
  if (modeled(joint)) return;
  for (std::size_t i = 0; i < joint.count; ++i) {
    v.data[i] = delta * v.data[i] + (1 - delta) * (joint.data[i] - old.data[i]);
  }
  if (gamma == 0) return rules::copy(xstar, joint);
  for (std::size_t i = 0; i < joint.count; ++i) xstar.data[i] = joint.data[i] + gamma * v.data[i];
}

void displace(Slice x, ConstSlice target, float alpha) {
  DTS_ASSERT(x.count == target.count, "mpca: displacement sizes differ");
  if (modeled(x) || modeled(target)) return;
  for (std::size_t i = 0; i < x.count; ++i) x.data[i] -= alpha * (x.data[i] - target.data[i]);
}

void add_penalty_gradient(Slice grad, ConstSlice x, ConstSlice target, float alpha) {
  DTS_ASSERT(grad.count == x.count && x.count == target.count, "mpca: penalty sizes differ");
  if (modeled(grad) || modeled(x) || modeled(target)) return;
  for (std::size_t i = 0; i < x.count; ++i) grad.data[i] += alpha * (x.data[i] - target.data[i]);
}

}  // namespace dts::mpca
