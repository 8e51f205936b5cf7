// The layers of kernels/model/layers.hpp: each forwards to ref:: (plain loops) or onednn:: (primitives built
// once per batch size N and cached in a PerBatch map). The cost() of each layer is the per-sample roofline
// input of the device model; the formulas are in layer_cost.hpp.
#include "kernels/model/layers.hpp"

#include <algorithm>
#include <vector>

#include "core/errors.hpp"
#include "kernels/model/layer_cost.hpp"
#include "kernels/ref/kernels.hpp"
#ifdef DTS_WITH_ONEDNN
#include "kernels/onednn/layers.hpp"
#endif

namespace dts::model::detail {
namespace {

namespace ref = dts::kernels::ref;
#ifdef DTS_WITH_ONEDNN
namespace dnn = dts::kernels::onednn;
#endif

// Fully connected. inp (N, C), weight (OC, C), bias (OC), out (N, OC).
class Linear final : public Layer {
 public:
  Linear(Backend b, std::string name, Dims in, int oc)
      : Layer(std::move(name), in, Dims{oc, 1, 1}), b_(b), C_(static_cast<int>(in.size())), OC_(oc) {}
  std::size_t weight_size() const override { return static_cast<std::size_t>(C_) * OC_; }
  std::size_t bias_size() const override { return static_cast<std::size_t>(OC_); }
  int fan_in() const override { return C_; }

  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> params, int N,
               const FwdCtx&) override {
    const auto w = params.first(weight_size()), bias = params.subspan(weight_size(), bias_size());
    if (b_ == Backend::kRef) return ref::linear_forward<float>(out, inp, w, bias, N, C_, OC_);
#ifdef DTS_WITH_ONEDNN
    kernel(N).forward(out, inp, w, bias);
#else
    no_onednn();
#endif
  }
  void backward(std::span<float> dinp, std::span<float> dparams, std::span<const float> dout,
                std::span<const float> inp, std::span<const float> params, int N) override {
    const auto w = params.first(weight_size());
    const auto dw = dparams.first(weight_size()), db = dparams.subspan(weight_size(), bias_size());
    if (b_ == Backend::kRef) return ref::linear_backward<float>(dinp, dw, db, dout, inp, w, N, C_, OC_);
#ifdef DTS_WITH_ONEDNN
    kernel(N).backward(dinp, dw, db, dout, inp, w);
#else
    no_onednn();
#endif
  }
  LayerCost cost(bool need_dinp, bool bwd) const override {
    return cost::gemm(name(), double(C_) * OC_, C_, OC_, double(num_params()), need_dinp, bwd);
  }

 private:
#ifdef DTS_WITH_ONEDNN
  dnn::Linear& kernel(int N) {
    return cache_.get(N, [&] { return std::make_unique<dnn::Linear>(N, C_, OC_); });
  }
  PerBatch<dnn::Linear> cache_;
#endif
  Backend b_;
  int C_, OC_;
};

// Convolution, stride 1. inp (N, C, H, W), weight (OC, C, K, K), bias (OC), out (N, OC, OH, OW).
class Conv final : public Layer {
 public:
  Conv(Backend b, std::string name, Dims in, kernels::ConvShape s)
      : Layer(std::move(name), in, Dims{s.OC, s.OH(), s.OW()}), b_(b), s_(s) {}
  std::size_t weight_size() const override { return static_cast<std::size_t>(s_.OC) * s_.C * s_.KH * s_.KW; }
  std::size_t bias_size() const override { return static_cast<std::size_t>(s_.OC); }
  int fan_in() const override { return s_.C * s_.KH * s_.KW; }

  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> params, int N,
               const FwdCtx&) override {
    const auto w = params.first(weight_size()), bias = params.subspan(weight_size(), bias_size());
    if (b_ == Backend::kRef) return ref::conv2d_forward<float>(out, inp, w, bias, shape(N));
#ifdef DTS_WITH_ONEDNN
    kernel(N).forward(out, inp, w, bias);
#else
    no_onednn();
#endif
  }
  void backward(std::span<float> dinp, std::span<float> dparams, std::span<const float> dout,
                std::span<const float> inp, std::span<const float> params, int N) override {
    const auto w = params.first(weight_size());
    const auto dw = dparams.first(weight_size()), db = dparams.subspan(weight_size(), bias_size());
    if (b_ == Backend::kRef) return ref::conv2d_backward<float>(dinp, dw, db, dout, inp, w, shape(N));
#ifdef DTS_WITH_ONEDNN
    kernel(N).backward(dinp, dw, db, dout, inp, w);
#else
    no_onednn();
#endif
  }
  LayerCost cost(bool need_dinp, bool bwd) const override {
    const double outs = double(out().size());
    return cost::gemm(name(), outs * s_.C * s_.KH * s_.KW, double(in().size()), outs, double(num_params()), need_dinp,
                      bwd);
  }

 private:
  kernels::ConvShape shape(int N) const {
    auto s = s_;
    s.N = N;
    return s;
  }
#ifdef DTS_WITH_ONEDNN
  dnn::Conv2d& kernel(int N) {
    return cache_.get(N, [&] { return std::make_unique<dnn::Conv2d>(shape(N)); });
  }
  PerBatch<dnn::Conv2d> cache_;
#endif
  Backend b_;
  kernels::ConvShape s_;
};

// Max or average pooling (PoolShape semantics). inp (N, C, H, W), out (N, C, OH, OW).
class Pool final : public Layer {
 public:
  Pool(Backend b, std::string name, Dims in, bool max, kernels::PoolShape s)
      : Layer(std::move(name), in, Dims{s.C, s.OH(), s.OW()}), b_(b), max_(max), s_(s) {}

  void forward(std::span<float> out, std::span<const float> inp, std::span<const float>, int N,
               const FwdCtx&) override {
    if (b_ == Backend::kRef) {
      if (!max_) return ref::avgpool2d_forward<float>(out, inp, shape(N));
      argmax_.resize(out.size());  // argmax (N, C, OH, OW)
      return ref::maxpool2d_forward<float>(out, argmax_, inp, shape(N));
    }
#ifdef DTS_WITH_ONEDNN
    kernel(N).forward(out, inp);
#else
    no_onednn();
#endif
  }
  void backward(std::span<float> dinp, std::span<float>, std::span<const float> dout, std::span<const float>,
                std::span<const float>, int N) override {
    if (dinp.empty()) return;
    if (b_ == Backend::kRef) {
      if (!max_) return ref::avgpool2d_backward<float>(dinp, dout, shape(N));
      return ref::maxpool2d_backward<float>(dinp, dout, argmax_, shape(N));
    }
#ifdef DTS_WITH_ONEDNN
    kernel(N).backward(dinp, dout);
#else
    no_onednn();
#endif
  }
  LayerCost cost(bool, bool bwd) const override {
    return cost::pool(name(), double(in().size()), double(out().size()), double(s_.K) * s_.K, max_, bwd);
  }

 private:
  kernels::PoolShape shape(int N) const {
    auto s = s_;
    s.N = N;
    return s;
  }
#ifdef DTS_WITH_ONEDNN
  dnn::Pool2d& kernel(int N) {
    const auto kind = max_ ? dnn::Pool2d::Kind::kMax : dnn::Pool2d::Kind::kAvg;
    return cache_.get(N, [&] { return std::make_unique<dnn::Pool2d>(kind, shape(N)); });
  }
  PerBatch<dnn::Pool2d> cache_;
#endif
  Backend b_;
  bool max_;
  kernels::PoolShape s_;
  std::vector<std::int32_t> argmax_;
};

}  // namespace

std::unique_ptr<Layer> make_linear(Backend b, std::string name, Dims in, int out_features) {
  return std::make_unique<Linear>(b, std::move(name), in, out_features);
}

std::unique_ptr<Layer> make_conv(Backend b, std::string name, Dims in, int out_channels, int kernel, int pad) {
  kernels::ConvShape s;
  s.C = in.c, s.H = in.h, s.W = in.w, s.OC = out_channels, s.KH = s.KW = kernel, s.stride = 1, s.pad = pad;
  if (s.OH() < 1 || s.OW() < 1 || in.h + 2 * pad < kernel || in.w + 2 * pad < kernel)
    throw InputError("", name + ": input " + std::to_string(in.h) + "x" + std::to_string(in.w) +
                             " is smaller than the " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                             " kernel");
  return std::make_unique<Conv>(b, std::move(name), in, s);
}

std::unique_ptr<Layer> make_pool(Backend b, std::string name, Dims in, bool max, int kernel, int stride,
                                 bool ceil_mode) {
  kernels::PoolShape s;
  s.C = in.c, s.H = in.h, s.W = in.w, s.K = kernel, s.stride = stride, s.pad = 0, s.ceil_mode = ceil_mode;
  if (in.h < kernel || in.w < kernel)
    throw InputError("", name + ": input " + std::to_string(in.h) + "x" + std::to_string(in.w) +
                             " is smaller than the " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                             " pooling window");
  return std::make_unique<Pool>(b, std::move(name), in, max, s);
}

}  // namespace dts::model::detail
