// oneDNN 2-D convolution (direct algorithm), same maths as ref::conv2d_*. src, weights and dst descriptors
// use format_tag::any so that the convolution runs in the blocked layouts it is fastest in (nChw16c,
// OIhw16i16o on AVX-512; 2-5x faster than plain gemm:jit on LeNet and cifar10-quick shapes), and
// detail::WeightedPrimitives reorders from and to the caller's nchw / oihw buffers. One exception: when
// the forward reads src as plain nchw (oneDNN's choice for few input channels, a first layer), backward
// data writes diff_src plain too; blocked, it would pad C to 16 and run 4x slower for C = 1.
// A second exception: when the channel counts are not multiples of 16 (LeNet's conv2, 20 -> 50), the blocked
// layouts pad them (to 32 and 64: 2x the work), so activations go channels-last (nhwc) instead, where oneDNN
// runs brgconv / masked-tail kernels without padding (1.5x faster on that layer, 1 and 2 threads). The rule is
// static, so that a given shape always runs the same kernels (and gives the same bits).
#include <string>

#include "kernels/onednn/layers.hpp"
#include "kernels/onednn/weighted.hpp"

namespace dts::kernels::onednn {

using detail::Dims;
using detail::f32_md;
using detail::Tag;

struct Conv2d::Impl {
  std::string name;  // layer and shape, for error messages
  ConvShape s;
  std::size_t inp_size, weight_size, out_size;
  detail::WeightedPrimitives prims;
};

namespace {

std::string describe(const ConvShape& s) {
  auto str = [](int v) { return std::to_string(v); };
  return "onednn::Conv2d(N=" + str(s.N) + ", C=" + str(s.C) + ", H=" + str(s.H) + ", W=" + str(s.W) +
         ", OC=" + str(s.OC) + ", K=" + str(s.KH) + "x" + str(s.KW) + ", stride=" + str(s.stride) +
         ", pad=" + str(s.pad) + ")";
}

}  // namespace

Conv2d::Conv2d(const ConvShape& s) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = describe(s);
  m.s = s;
  DTS_ASSERT(s.N > 0 && s.C > 0 && s.OC > 0 && s.stride > 0 && s.pad >= 0 && s.OH() > 0 && s.OW() > 0,
             m.name + ": bad shape");
  m.inp_size = static_cast<std::size_t>(s.N) * s.C * s.H * s.W;
  m.weight_size = static_cast<std::size_t>(s.OC) * s.C * s.KH * s.KW;
  m.out_size = static_cast<std::size_t>(s.N) * s.OC * s.OH() * s.OW();
  detail::guarded(m.name, [&] {
    const Dims src{s.N, s.C, s.H, s.W}, wei{s.OC, s.C, s.KH, s.KW}, bias{s.OC}, dst{s.N, s.OC, s.OH(), s.OW()};
    const Dims strides{s.stride, s.stride}, padding{s.pad, s.pad};
    const detail::WeightedPrimitives::UserMds user{f32_md(src, Tag::nchw), f32_md(wei, Tag::oihw), f32_md(bias, Tag::x),
                                                   f32_md(dst, Tag::nchw)};
    auto any = [](const Dims& d) { return f32_md(d, Tag::any); };
    const bool channels_last = s.C >= 8 && (s.C % 16 != 0 || s.OC % 16 != 0);
    auto act = [&](const Dims& d) { return f32_md(d, channels_last ? Tag::nhwc : Tag::any); };
    using dnnl::algorithm;
    using dnnl::prop_kind;
    const dnnl::convolution_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, algorithm::convolution_direct, act(src), any(wei), user.bias, act(dst), strides,
         padding, padding},
        detail::engine());
    const auto diff_src_md = fwd_pd.src_desc() == user.src ? user.src : act(src);
    const dnnl::convolution_backward_data::primitive_desc bwd_data_pd(
        {algorithm::convolution_direct, diff_src_md, any(wei), act(dst), strides, padding, padding}, detail::engine(),
        fwd_pd);
    const dnnl::convolution_backward_weights::primitive_desc bwd_weights_pd(
        {algorithm::convolution_direct, act(src), any(wei), user.bias, act(dst), strides, padding, padding},
        detail::engine(), fwd_pd);
    m.prims = detail::WeightedPrimitives(user, fwd_pd, bwd_data_pd, bwd_weights_pd);
  });
}

Conv2d::~Conv2d() = default;

void Conv2d::forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                     std::span<const float> bias) {
  const Impl& m = *impl_;
  DTS_ASSERT(out.size() == m.out_size, m.name + ": out must be (N, OC, OH, OW)");
  DTS_ASSERT(inp.size() == m.inp_size, m.name + ": inp must be (N, C, H, W)");
  DTS_ASSERT(weight.size() == m.weight_size, m.name + ": weight must be (OC, C, KH, KW)");
  DTS_ASSERT(bias.size() == static_cast<std::size_t>(m.s.OC), m.name + ": bias must be (OC)");
  detail::guarded(m.name, [&] { impl_->prims.forward(out, inp, weight, bias); });
}

void Conv2d::backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                      std::span<const float> dout, std::span<const float> inp, std::span<const float> weight) {
  const Impl& m = *impl_;
  DTS_ASSERT(dinp.empty() || dinp.size() == m.inp_size, m.name + ": dinp must be (N, C, H, W) or empty");
  DTS_ASSERT(dweight.size() == m.weight_size, m.name + ": dweight must be (OC, C, KH, KW)");
  DTS_ASSERT(dbias.size() == static_cast<std::size_t>(m.s.OC), m.name + ": dbias must be (OC)");
  DTS_ASSERT(dout.size() == m.out_size, m.name + ": dout must be (N, OC, OH, OW)");
  DTS_ASSERT(inp.size() == m.inp_size, m.name + ": inp must be (N, C, H, W)");
  DTS_ASSERT(weight.size() == m.weight_size, m.name + ": weight must be (OC, C, KH, KW)");
  detail::guarded(m.name, [&] { impl_->prims.backward(dinp, dweight, dbias, dout, inp, weight); });
}

}  // namespace dts::kernels::onednn
