// The per-sample cost formulas of layer_cost.hpp.
#include "kernels/model/layer_cost.hpp"

namespace dts::model::cost {
namespace {
constexpr double kF = sizeof(float);
}  // namespace

LayerCost gemm(const std::string& name, double mac, double in, double out, double params, bool need_dinp, bool bwd) {
  LayerCost c;
  c.name = name;
  c.fwd_flops_per_sample = 2 * mac + out;
  c.fwd_bytes_per_sample = kF * (in + out);
  if (bwd) {
    c.bwd_flops_per_sample = 2 * mac + out + (need_dinp ? 2 * mac : 0.0);
    c.bwd_bytes_per_sample = kF * (out + in + (need_dinp ? in : 0.0));
  }
  c.param_bytes = kF * params;
  return c;
}

LayerCost pool(const std::string& name, double in, double out, double win, bool max, bool bwd) {
  const double idx = max ? out : 0.0;
  LayerCost c;
  c.name = name;
  c.fwd_flops_per_sample = win * out;
  c.fwd_bytes_per_sample = kF * (in + out + idx);
  if (bwd) {
    c.bwd_flops_per_sample = max ? out : win * out;
    c.bwd_bytes_per_sample = kF * (out + in + idx);
  }
  return c;
}

LayerCost elementwise(const std::string& name, double n, double tensors_fwd, double tensors_bwd, bool bwd,
                      double flops_fwd, double flops_bwd) {
  LayerCost c;
  c.name = name;
  c.fwd_flops_per_sample = flops_fwd * n;
  c.fwd_bytes_per_sample = kF * tensors_fwd * n;
  if (bwd) {
    c.bwd_flops_per_sample = flops_bwd * n;
    c.bwd_bytes_per_sample = kF * tensors_bwd * n;
  }
  return c;
}

LayerCost softmax_xent(const std::string& name, double K) {
  return LayerCost{name, 5 * K, 2 * K, kF * 2 * K, kF * 2 * K, 0};
}

}  // namespace dts::model::cost
