// A Compute with a known answer (STYLE.md §7): worker i minimizes f_i(x) = 1/2 |x - c_i|^2, so the
// minimizer of the sum, which every consensus algorithm must reach, is the mean of the c_i. No kernels and
// no data set; time is charged through a callback (simulated time in tests/sim, nothing elsewhere).
#pragma once

#include <functional>
#include <vector>

#include "algorithms/api/compute.hpp"

namespace dts::test {

struct QuadraticProblem {
  int workers = 4;
  std::size_t dim = 8;
  std::uint64_t seed = 7;
  double lr = 0.1;
  double step_time_s = 1e-3;  // charged per forward_backward
  bool same_target = false;   // every worker gets c_0 (a consensus problem with no disagreement)
  // Added for the master-worker algorithms; the defaults keep the problem as it was.
  std::vector<double> slowdown;  // step_time_s multiplier per worker index (a straggler); missing: 1
  double update_time_s = 0;      // charged per optimizer_step and per charge_elementwise call
  double momentum = 0;           // optimizer_step as heavy ball: b = momentum b + g; x -= lr b
  int blocks = 1;                // param_blocks(): dim split into this many layers, for per-layer messages
  // c_i for worker index i (0-based), drawn from Rng(seed, i, "quadratic") in [-1, 1].
  std::vector<float> target(int worker) const;
  std::vector<double> mean_target() const;
};

class QuadraticCompute final : public Compute {
 public:
  // worker < 0: a server rank without a data term.
  QuadraticCompute(const QuadraticProblem& p, int worker, std::function<void(double)> charge);
  std::size_t num_params() const override { return p_.dim; }
  bool real() const override { return true; }
  std::vector<model::ParamBlock> param_blocks() const override;
  void init_params(Slice params) override;
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  void charge_elementwise(std::size_t n, int streams) override;
  // A third of the step time as the forward pass, then an equal share of the rest before each block's ready().
  float forward_backward_layers(ConstSlice params, Slice grads,
                                const std::function<void(std::size_t layer)>& ready) override;

 private:
  float gradient(ConstSlice params, Slice grads);
  QuadraticProblem p_;
  std::vector<float> c_;
  std::vector<float> b_;  // momentum buffer
  double step_time_s_ = 0;
  std::function<void(double)> charge_;
};

}  // namespace dts::test
