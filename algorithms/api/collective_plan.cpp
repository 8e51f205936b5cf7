#include "algorithms/api/collective_plan.hpp"

#include "algorithms/rules/vector_ops.hpp"

namespace dts {

void move_in_place(const CollectivePlan& plan, std::span<const Slice> data, int stages) {
  for (int s = 0; s < stages; ++s) {
    for (int r = 0; r < plan.size(); ++r) {
      for (const PlanRecv& m : plan.stage(r, s).recvs) {
        const Slice into = data[static_cast<std::size_t>(r)].sub(m.chunk.offset, m.chunk.count);
        const ConstSlice from = data[static_cast<std::size_t>(m.peer)].sub(m.chunk.offset, m.chunk.count);
        m.add ? rules::axpy(into, 1.0f, from) : rules::copy(into, from);
      }
    }
  }
}

}  // namespace dts
