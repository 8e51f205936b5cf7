// TrainerCompute: the size checks of what algorithms hand to a Compute, written once.
#include "algorithms/api/trainer_compute.hpp"

#include <limits>

#include "core/errors.hpp"

namespace dts {

void TrainerCompute::init_params(Slice params) {
  DTS_ASSERT(params.count == num_params() && (!real_ || params.data.size() == params.count), "init_params: wrong size");
  if (real_) trainer_.init_params(params.data);
}

float TrainerCompute::train(ConstSlice params, Slice grads) {
  DTS_ASSERT(trainer_.has_shard(), "forward_backward on a rank without a data shard (a server)");
  DTS_ASSERT(params.count == num_params() && grads.count == num_params(), "forward_backward: wrong size");
  return real_ ? trainer_.forward_backward(params.data, grads.data) : std::numeric_limits<float>::quiet_NaN();
}

void TrainerCompute::update(Slice params, ConstSlice grads) {
  DTS_ASSERT(params.count == num_params() && grads.count == num_params(), "optimizer_step: wrong size");
  if (real_) trainer_.optimizer_step(params.data, grads.data);
}

void TrainerCompute::update_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) {
  DTS_ASSERT(params.count == grads.count && offset + params.count <= num_params(), "optimizer_step_range: wrong range");
  if (real_) trainer_.optimizer().step_range(params.data, grads.data, offset, iteration);
}

std::vector<Slice> TrainerCompute::optimizer_state() {
  std::vector<Slice> out;
  if (!real_) {  // modeled: the buffers the optimizer would keep, without data
    for (int i = 0; i < trainer_.optimizer().state_buffers(); ++i) out.emplace_back(std::span<float>(), num_params());
    return out;
  }
  for (const std::span<float> s : trainer_.optimizer().state()) out.emplace_back(s);
  return out;
}

}  // namespace dts
