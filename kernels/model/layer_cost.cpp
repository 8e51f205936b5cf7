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
  c.fwd_kernels = 2;
  c.bwd_kernels = bwd ? (need_dinp ? 3 : 2) : 0;
  c.fwd_gemms = 1;
  c.bwd_gemms = bwd ? (need_dinp ? 2 : 1) : 0;
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
  c.fwd_kernels = 1;
  c.bwd_kernels = bwd ? (max ? 2 : 1) : 0;  // max: Caffe's own kernel, after zeroing dinp; average: cuDNN's
  return c;
}

LayerCost elementwise(const std::string& name, double n, double tensors_fwd, double tensors_bwd, bool bwd,
                      double flops_fwd, double flops_bwd, double kernels_fwd, double kernels_bwd) {
  LayerCost c;
  c.name = name;
  c.fwd_flops_per_sample = flops_fwd * n;
  c.fwd_bytes_per_sample = kF * tensors_fwd * n;
  if (bwd) {
    c.bwd_flops_per_sample = flops_bwd * n;
    c.bwd_bytes_per_sample = kF * tensors_bwd * n;
  }
  c.fwd_kernels = kernels_fwd;
  c.bwd_kernels = bwd ? kernels_bwd : 0;
  return c;
}

LayerCost softmax_xent(const std::string& name, double K) {
  LayerCost c{name, 5 * K, 2 * K, kF * 2 * K, kF * 2 * K, 0};
  c.fwd_kernels = 4;
  c.bwd_kernels = 2;
  return c;
}

}  // namespace dts::model::cost
