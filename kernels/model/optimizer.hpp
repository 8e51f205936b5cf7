// Optimizers over the flat parameter buffer, with PyTorch's semantics (torch.optim.SGD / Adam):
//   sgd       p -= lr * (g + wd p)
//   momentum  b = mu b + (g + wd p); p -= lr b                      (b starts at g + wd p)
//   nesterov  b as momentum; p -= lr ((g + wd p) + mu b)
//   adam      bias-corrected first and second moments, L2 weight decay added to g
// Learning-rate policies: "fixed", and Caffe's "inv": lr * (1 + gamma * iter)^-power.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kernels/huge_pages.hpp"

namespace dts::model {

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | momentum | nesterov | adam
  double lr = 0.01;
  double momentum = 0.9;
  double weight_decay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::string lr_policy = "fixed";  // fixed | inv
  double lr_gamma = 1e-4, lr_power = 0.75;
};

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& cfg, std::size_t num_params);
  // Applies one step to params with gradient grads, then advances the iteration counter.
  void step(std::span<float> params, std::span<const float> grads);
  double lr_now() const;
  std::int64_t iteration() const { return iter_; }
  // Work per parameter of one step, for the device model: floating-point ops and bytes moved.
  double flops_per_param() const;
  double bytes_per_param() const;
  const OptimizerConfig& config() const { return cfg_; }
  // The state buffers (momentum/Nesterov {b}, Adam {m, v}, SGD none), allocated (zeros) if no step has run:
  // GossipGraD averages them between ranks. Not to be called concurrently with step().
  std::vector<std::span<float>> state();
  // How many state buffers the kind keeps (0, 1 or 2), without allocating them.
  int state_buffers() const;
  // Added for the MXNet-style parameter server (issue 17): one step on floats [offset, offset + params.size())
  // of the parameter vector, with the state at that offset, at iteration `iteration` (the steps this range has
  // had before: the lr policy, momentum's first step and Adam's bias correction read it). The counter of
  // step() is neither read nor advanced. Steps over a partition of [0, num_params) at iteration() equal one
  // step(), bit for bit. Ranges that do not overlap may be stepped concurrently.
  void step_range(std::span<float> params, std::span<const float> grads, std::size_t offset, std::int64_t iteration);

 private:
  OptimizerConfig cfg_;
  BigFloats m_, v_;  // momentum buffer / Adam moments (allocated by the first step, sized num_params)
  std::once_flag allocated_;
  std::size_t n_;
  std::atomic<std::int64_t> iter_{0};  // atomic: Hogwild servers step one optimizer concurrently
  void allocate();
  double lr_at(std::int64_t iteration) const;
  // The update of floats [offset, offset + n) at `iteration`: step()'s and step_range()'s arithmetic.
  void apply(float* p, const float* g, std::size_t offset, std::size_t n, std::int64_t iteration);
};

}  // namespace dts::model
