// QuadraticCompute: f_i(x) = 1/2 |x - c_i|^2, gradient x - c_i, plain SGD.
#include "tests/support/quadratic_compute.hpp"

#include "kernels/rng.hpp"

namespace dts::test {

std::vector<float> QuadraticProblem::target(int worker) const {
  Rng rng(seed, same_target ? 0 : static_cast<std::uint64_t>(worker), "quadratic");
  std::vector<float> c(dim);
  for (auto& v : c) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  return c;
}

std::vector<double> QuadraticProblem::mean_target() const {
  std::vector<double> m(dim, 0.0);
  for (int i = 0; i < workers; ++i) {
    const auto c = target(i);
    for (std::size_t k = 0; k < dim; ++k) m[k] += static_cast<double>(c[k]) / workers;
  }
  return m;
}

QuadraticCompute::QuadraticCompute(const QuadraticProblem& p, int worker, std::function<void(double)> charge)
    : p_(p), charge_(std::move(charge)) {
  if (worker >= 0) c_ = p.target(worker);
}

void QuadraticCompute::init_params(Slice params) {
  for (auto& v : params.data) v = 0.0f;
}

float QuadraticCompute::forward_backward(ConstSlice params, Slice grads) {
  DTS_ASSERT(!c_.empty(), "forward_backward on a server rank");
  double loss = 0;
  for (std::size_t k = 0; k < p_.dim; ++k) {
    grads.data[k] = params.data[k] - c_[k];
    loss += 0.5 * grads.data[k] * grads.data[k];
  }
  charge_(p_.step_time_s);
  return static_cast<float>(loss);
}

void QuadraticCompute::optimizer_step(Slice params, ConstSlice grads) {
  for (std::size_t k = 0; k < p_.dim; ++k) params.data[k] -= static_cast<float>(p_.lr) * grads.data[k];
}

void QuadraticCompute::charge_elementwise(std::size_t, int) {}

}  // namespace dts::test
