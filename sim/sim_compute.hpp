// Compute on the simulator: every call advances the calling actor's simulated time by the device model's
// cost (an execute() of the equivalent flops on the rank's host, so host speed profiles slow it down), and
// with real numerics also runs the kernels on this rank's data shard.
#pragma once

#include <memory>
#include <optional>

#include <simgrid/s4u.hpp>

#include "algorithms/api/compute.hpp"
#include "algorithms/api/request.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/model/network.hpp"
#include "kernels/model/optimizer.hpp"
#include "sim/device.hpp"

namespace dts::sim {

// What all ranks of one run share (read-only).
struct ModelSetup {
  std::string network = "mlp";
  model::Backend backend = model::Backend::kOnednn;
  bool real = true;
  const data::Dataset* train = nullptr;  // the training set; sample shape and classes come from it
  int batch = 32;                        // per worker
  std::uint64_t seed = 42;
  model::OptimizerConfig optimizer;
  std::optional<double> step_time_s;     // calibrated forward+backward time, replacing the roofline
  int workers = 1;
  int first_worker_rank = 0;             // ranks below it are servers: no data shard
};

class SimCompute final : public Compute {
 public:
  SimCompute(const ModelSetup& setup, Rank rank, const Device& device, simgrid::s4u::Host* host);
  std::size_t num_params() const override { return num_params_; }
  bool real() const override { return setup_.real; }
  std::vector<model::ParamBlock> param_blocks() const override { return net_->param_blocks(); }
  std::int64_t steps_per_epoch() const override;
  void init_params(Slice params) override;
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  double learning_rate() const override { return optimizer_.lr_now(); }
  void charge_elementwise(std::size_t n, int streams) override;

 private:
  void charge(double seconds);
  const ModelSetup& setup_;
  Rank rank_;
  Device device_;
  simgrid::s4u::Host* host_;
  std::unique_ptr<model::Network> net_;
  std::size_t num_params_ = 0;
  double step_time_s_ = 0;
  model::Optimizer optimizer_;
  std::unique_ptr<data::BatchStream> stream_;  // workers only
  std::vector<float> x_;
  std::vector<std::int32_t> y_;
  std::int64_t steps_ = 0;
};

}  // namespace dts::sim
