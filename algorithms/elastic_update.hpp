// An elastic averaging worker's update, EASGD's rule (1) (papers/easgd_hpc.md): W <- W - eta dW - alpha (W - W~),
// written once for the EASGD workers and the `update` microbenchmark that calibrates its cost.
#pragma once

#include "algorithms/api/compute.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {

// With `pull`: the elastic difference alpha (W - W~) into `diff`, from the W before the optimizer's step
// (`diff` may be the buffer that holds W~), the optimizer's step, then W minus the difference; each elementwise
// pass charged (3 streams). Without: the optimizer's step alone.
inline void elastic_worker_update(Compute& compute, Slice x, ConstSlice grad, ConstSlice center, Slice diff,
                                  float alpha, bool pull) {
  if (pull) {
    rules::elastic_diff(diff, x, center, alpha);
    compute.charge_elementwise(x.count, 3);
  }
  compute.optimizer_step(x, grad);
  if (pull) {
    rules::axpy(x, -1.0f, diff);
    compute.charge_elementwise(x.count, 3);
  }
}

}  // namespace dts
