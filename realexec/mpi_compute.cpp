// MpiCompute: the Trainer's kernels (algorithms/api/trainer_compute.hpp), real numerics only, and the
// scenario's stretch and failure.
#include "realexec/mpi_compute.hpp"

namespace dts::mpi {

const model::TrainerSetup& MpiCompute::checked(const model::TrainerSetup& setup) {
  if (!setup.real) {
    throw InputError("model.numerics", "modeled numerics run no kernels; the MPI backend needs \"real\"");
  }
  return setup;
}

MpiCompute::MpiCompute(const model::TrainerSetup& setup, Rank rank, const RankScenario* scenario)
    : TrainerCompute(checked(setup), rank), scenario_(scenario != nullptr && scenario->active() ? scenario : nullptr) {}

template <class Work>
auto MpiCompute::timed(Work&& work) {
  if (scenario_ == nullptr) return work();
  scenario_->check_alive();
  const std::int64_t step = steps_.load();
  const double start_s = scenario_->now_s();
  auto out = work();
  scenario_->stretch(step, start_s, scenario_->now_s() - start_s);
  return out;
}

float MpiCompute::forward_backward(ConstSlice params, Slice grads) {
  const float loss = timed([&] { return train(params, grads); });
  ++steps_;
  return loss;
}

void MpiCompute::optimizer_step(Slice params, ConstSlice grads) {
  timed([&] {
    update(params, grads);
    return 0;
  });
}

void MpiCompute::optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) {
  timed([&] {
    update_range(params, grads, offset, iteration);
    return 0;
  });
}

void MpiCompute::charge_elementwise(std::size_t /*n*/, int /*streams*/) {
  if (scenario_ != nullptr) scenario_->check_alive();
}

}  // namespace dts::mpi
