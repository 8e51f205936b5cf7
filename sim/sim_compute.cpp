// SimCompute: kernels (real numerics) plus device-model charging.
#include "sim/sim_compute.hpp"

#include <cmath>
#include <limits>

#include "kernels/rng.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

SimCompute::SimCompute(const ModelSetup& setup, Rank rank, const Device& device, sg4::Host* host)
    : setup_(setup),
      rank_(rank),
      device_(device),
      host_(host),
      net_(model::make_network(setup.network, setup.backend, setup.train->c, setup.train->h, setup.train->w,
                               setup.train->classes)),
      num_params_(net_->num_params()),
      optimizer_(setup.optimizer, setup.real ? num_params_ : 0) {
  step_time_s_ = setup.step_time_s ? *setup.step_time_s : device_.step_time_s(net_->cost(), setup.batch);
  const int worker = rank - setup.first_worker_rank;
  if (worker >= 0) {
    auto shard = data::shard_indices(setup.train->n, worker, setup.workers, setup.seed);
    stream_ = std::make_unique<data::BatchStream>(*setup.train, std::move(shard), setup.batch,
                                                  setup.seed + static_cast<std::uint64_t>(worker));
    if (setup.real) {
      x_.resize(static_cast<std::size_t>(setup.batch) * setup.train->sample_size());
      y_.resize(static_cast<std::size_t>(setup.batch));
    }
  }
}

std::int64_t SimCompute::steps_per_epoch() const {
  return stream_ ? static_cast<std::int64_t>(stream_->steps_per_epoch()) : 0;
}

void SimCompute::charge(double seconds) {
  if (seconds > 0) sg4::this_actor::execute(seconds * host_->get_speed());
}

void SimCompute::init_params(Slice params) {
  DTS_ASSERT(params.count == num_params_, "init_params: wrong size");
  if (!params.data.empty()) net_->init_params(params.data, setup_.seed);
}

float SimCompute::forward_backward(ConstSlice params, Slice grads) {
  DTS_ASSERT(stream_ != nullptr, "forward_backward on a rank without a data shard (a server)");
  DTS_ASSERT(params.count == num_params_ && grads.count == num_params_, "forward_backward: wrong size");
  float loss = std::numeric_limits<float>::quiet_NaN();
  if (setup_.real) {
    stream_->next(x_, y_);
    Rng drop(setup_.seed, static_cast<std::uint64_t>(rank_), static_cast<std::uint64_t>(steps_));
    loss = net_->forward_backward(params.data, grads.data, x_, y_, setup_.batch, drop.next_u64());
  }
  ++steps_;
  charge(step_time_s_);
  return loss;
}

void SimCompute::optimizer_step(Slice params, ConstSlice grads) {
  if (setup_.real) optimizer_.step(params.data, grads.data);
  const auto n = static_cast<double>(params.count);
  charge(std::max(n * optimizer_.flops_per_param() / device_.peak_flops,
                  n * optimizer_.bytes_per_param() / device_.mem_bw_Bps) /
         device_.efficiency);
}

void SimCompute::charge_elementwise(std::size_t n, int streams) {
  charge(device_.elementwise_time_s(static_cast<double>(n), streams));
}

}  // namespace dts::sim
