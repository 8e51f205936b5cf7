// Optimizers of kernels/model/optimizer.hpp with torch.optim semantics (SGD with dampening 0, Adam without
// amsgrad), in float like torch's fp32 parameters. Weight decay is L2 folded into the gradient, d = g + wd p,
// before momentum or Adam's moments (torch, not AdamW). The momentum buffer starts at the first d, as torch does;
// Adam's step t = iteration + 1 drives the bias corrections. Elementwise, so threads never change a result.
#include "kernels/model/optimizer.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "kernels/elementwise.hpp"

namespace dts::model {
namespace {
enum class Kind { kSgd, kMomentum, kNesterov, kAdam };

Kind kind_of(const std::string& k) {
  if (k == "sgd") return Kind::kSgd;
  if (k == "momentum") return Kind::kMomentum;
  if (k == "nesterov") return Kind::kNesterov;
  if (k == "adam") return Kind::kAdam;
  throw InputError("", "unknown optimizer kind '" + k + "' (known: sgd, momentum, nesterov, adam)");
}
}  // namespace

// The state buffers are allocated here, not on the first step, so that concurrent steps (a Hogwild server
// per worker) never race on an allocation.
Optimizer::Optimizer(const OptimizerConfig& cfg, std::size_t num_params) : cfg_(cfg), n_(num_params) {
  (void)kind_of(cfg_.kind);  // validates the name
  if (cfg_.lr_policy != "fixed" && cfg_.lr_policy != "inv")
    throw InputError("", "unknown lr policy '" + cfg_.lr_policy + "' (known: fixed, inv)");
}

// Caffe's "inv": lr * (1 + gamma * iter)^-power, iter = steps taken before this one (0 for the first).
double Optimizer::lr_now() const { return lr_at(iter_.load()); }

double Optimizer::lr_at(std::int64_t iteration) const {
  if (cfg_.lr_policy == "inv")
    return cfg_.lr * std::pow(1.0 + cfg_.lr_gamma * static_cast<double>(iteration), -cfg_.lr_power);
  return cfg_.lr;
}

void Optimizer::step(std::span<float> params, std::span<const float> grads) {
  DTS_ASSERT(params.size() == n_ && grads.size() == n_, "Optimizer::step: buffers must hold num_params floats");
  apply(params.data(), grads.data(), 0, n_, iter_.load());
  ++iter_;
}

void Optimizer::step_range(std::span<float> params, std::span<const float> grads, std::size_t offset,
                           std::int64_t iteration) {
  DTS_ASSERT(params.size() == grads.size() && offset + params.size() <= n_, "Optimizer::step_range: wrong range");
  apply(params.data(), grads.data(), offset, params.size(), iteration);
}

void Optimizer::apply(float* p, const float* g, std::size_t offset, std::size_t count, std::int64_t iteration) {
  const Kind kind = kind_of(cfg_.kind);
  const float lr = static_cast<float>(lr_at(iteration)), wd = static_cast<float>(cfg_.weight_decay);
  const float mu = static_cast<float>(cfg_.momentum);
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(count);
  const bool first = iteration == 0;
  allocate();  // on the first step: a rank that never steps (a center) needs no state
  float* m = kind == Kind::kSgd ? nullptr : m_.data() + offset;

  if (kind == Kind::kSgd) {
    elementwise(n, [=](std::ptrdiff_t i) { p[i] -= lr * (g[i] + wd * p[i]); });
  } else if (kind == Kind::kMomentum || kind == Kind::kNesterov) {
    const bool nesterov = kind == Kind::kNesterov;
    elementwise(n, [=](std::ptrdiff_t i) {
      const float d = g[i] + wd * p[i];
      m[i] = first ? d : mu * m[i] + d;  // b = mu b + d   (b = d on the first step)
      p[i] -= lr * (nesterov ? d + mu * m[i] : m[i]);
    });
  } else {  // Adam: m = b1 m + (1-b1) d; v = b2 v + (1-b2) d^2; p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)
    const double t = static_cast<double>(iteration + 1);
    const float b1 = static_cast<float>(cfg_.beta1), b2 = static_cast<float>(cfg_.beta2);
    const float eps = static_cast<float>(cfg_.eps);
    const float step_size = static_cast<float>(lr_at(iteration) / (1.0 - std::pow(cfg_.beta1, t)));
    const float sqrt_bc2 = static_cast<float>(std::sqrt(1.0 - std::pow(cfg_.beta2, t)));
    float* v = v_.data() + offset;
    elementwise(n, [=](std::ptrdiff_t i) {
      const float d = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1.0f - b1) * d;
      v[i] = b2 * v[i] + (1.0f - b2) * d * d;
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) / sqrt_bc2 + eps);
    });
  }
}

void Optimizer::allocate() {
  std::call_once(allocated_, [&] {
    const Kind kind = kind_of(cfg_.kind);
    if (kind != Kind::kSgd) m_.assign(n_, 0.0f);
    if (kind == Kind::kAdam) v_.assign(n_, 0.0f);
  });
}

int Optimizer::state_buffers() const {
  const Kind kind = kind_of(cfg_.kind);
  return kind == Kind::kSgd ? 0 : kind == Kind::kAdam ? 2 : 1;
}

std::vector<std::span<float>> Optimizer::state() {
  allocate();
  std::vector<std::span<float>> out;
  if (state_buffers() >= 1) out.emplace_back(m_.data(), m_.size());
  if (state_buffers() == 2) out.emplace_back(v_.data(), v_.size());
  return out;
}

// Per parameter of one step (wd adds 2 flops and no traffic: p is read anyway):
//   sgd       flops 2           bytes read g, p; write p                    = 12
//   momentum  flops 4           + read and write b                          = 20
//   nesterov  flops 6           as momentum                                 = 20
//   adam      flops 12 (m 3, v 4, sqrt/div/add 3, update 2)  + m, v r/w    = 28
double Optimizer::flops_per_param() const {
  const double wd = cfg_.weight_decay != 0 ? 2.0 : 0.0;
  switch (kind_of(cfg_.kind)) {
    case Kind::kSgd:
      return 2 + wd;
    case Kind::kMomentum:
      return 4 + wd;
    case Kind::kNesterov:
      return 6 + wd;
    case Kind::kAdam:
      return 12 + wd;
  }
  return 0;
}

double Optimizer::bytes_per_param() const {
  switch (kind_of(cfg_.kind)) {
    case Kind::kSgd:
      return 12;
    case Kind::kMomentum:
    case Kind::kNesterov:
      return 20;
    case Kind::kAdam:
      return 28;
  }
  return 0;
}

}  // namespace dts::model
