// oneDNN max and average pooling with PoolShape's (Caffe's) semantics. Ceil mode becomes asymmetric
// padding: padding_r is chosen so that oneDNN's output size equals PoolShape::OH/OW. oneDNN divides an
// average by K*K (avg_include_padding, extra right padding included) or by the window clipped to the real
// input (avg_exclude_padding); Caffe clips to the padded input. We take whichever algorithm agrees with
// Caffe at every output position (exclude when pad = 0, include when there is no overhang) and otherwise
// use include_padding and multiply by K*K / Caffe's divisor per position (a binary primitive).
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/onednn/engine.hpp"
#include "kernels/onednn/layers.hpp"

namespace dts::kernels::onednn {

using detail::Dims;
using detail::f32_md;
using detail::Tag;

struct Pool2d::Impl {
  std::string name;  // layer and shape, for error messages
  std::size_t inp_size = 0, out_size = 0;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
  dnnl::memory src, dst, diff_src, diff_dst, workspace;  // workspace: max pooling only
  bool rescale = false;                                  // avg: outputs times scale (1, 1, OH, OW)
  dnnl::binary mul;                                      // (N, C, OH, OW) * scale, in place or into scaled
  dnnl::memory scale, scaled;
  std::vector<float> scale_values, scaled_values;
};

namespace {

std::string describe(Pool2d::Kind kind, const PoolShape& s) {
  auto str = [](int v) { return std::to_string(v); };
  return std::string(kind == Pool2d::Kind::kMax ? "onednn::Pool2d(max" : "onednn::Pool2d(avg") + ", N=" + str(s.N) +
         ", C=" + str(s.C) + ", H=" + str(s.H) + ", W=" + str(s.W) + ", K=" + str(s.K) + ", stride=" + str(s.stride) +
         ", pad=" + str(s.pad) + (s.ceil_mode ? ", ceil" : "") + ")";
}

// Divisors along one axis for each output position: Caffe's (window clipped to the padded input) and the
// window clipped to the real input (oneDNN's avg_exclude_padding).
struct AxisDivisors {
  std::vector<int> caffe, real;
};

AxisDivisors axis_divisors(int in, int out, const PoolShape& s) {
  AxisDivisors d;
  for (int o = 0; o < out; ++o) {
    const int start = o * s.stride - s.pad;
    d.caffe.push_back(std::min(start + s.K, in + s.pad) - start);
    d.real.push_back(std::min(start + s.K, in) - std::max(start, 0));
  }
  return d;
}

}  // namespace

Pool2d::Pool2d(Kind kind, const PoolShape& s) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = describe(kind, s);
  const int OH = s.OH(), OW = s.OW();
  DTS_ASSERT(s.N > 0 && s.C > 0 && s.stride > 0 && s.pad >= 0 && s.pad < s.K && OH > 0 && OW > 0,
             m.name + ": bad shape");
  DTS_ASSERT((OH - 1) * s.stride - s.pad < s.H && (OW - 1) * s.stride - s.pad < s.W,
             m.name + ": a pooling window lies entirely outside the input");
  m.inp_size = static_cast<std::size_t>(s.N) * s.C * s.H * s.W;
  m.out_size = static_cast<std::size_t>(s.N) * s.C * OH * OW;

  // Average divisors, and the algorithm that reproduces Caffe's (see the file comment).
  const AxisDivisors dh = axis_divisors(s.H, OH, s), dw = axis_divisors(s.W, OW, s);
  bool exclude_ok = true, include_ok = true;
  for (int oh = 0; oh < OH; ++oh)
    for (int ow = 0; ow < OW; ++ow) {
      const int caffe = dh.caffe[oh] * dw.caffe[ow];
      exclude_ok = exclude_ok && dh.real[oh] * dw.real[ow] == caffe;
      include_ok = include_ok && s.K * s.K == caffe;
    }
  using dnnl::algorithm;
  const algorithm alg = kind == Kind::kMax ? algorithm::pooling_max
                        : exclude_ok       ? algorithm::pooling_avg_exclude_padding
                                           : algorithm::pooling_avg_include_padding;
  m.rescale = kind == Kind::kAvg && !exclude_ok && !include_ok;

  detail::guarded(m.name, [&] {
    const auto src_md = f32_md({s.N, s.C, s.H, s.W}, Tag::nchw), dst_md = f32_md({s.N, s.C, OH, OW}, Tag::nchw);
    // Right/bottom padding so that (in + pad_l + pad_r - K) / stride + 1 equals PoolShape's output size.
    auto pad_r = [&](int in, int out) { return std::max(s.pad, (out - 1) * s.stride + s.K - in - s.pad); };
    const Dims strides{s.stride, s.stride}, kernel{s.K, s.K}, pad_l{s.pad, s.pad};
    const Dims pad_rb{pad_r(s.H, OH), pad_r(s.W, OW)};
    const dnnl::pooling_forward::primitive_desc fwd_pd(
        {dnnl::prop_kind::forward_training, alg, src_md, dst_md, strides, kernel, pad_l, pad_rb}, detail::engine());
    const dnnl::pooling_backward::primitive_desc bwd_pd({alg, src_md, dst_md, strides, kernel, pad_l, pad_rb},
                                                        detail::engine(), fwd_pd);
    m.fwd = dnnl::pooling_forward(fwd_pd);
    m.bwd = dnnl::pooling_backward(bwd_pd);
    m.src = detail::unbound(src_md), m.diff_src = detail::unbound(src_md);
    m.dst = detail::unbound(dst_md), m.diff_dst = detail::unbound(dst_md);
    if (kind == Kind::kMax) m.workspace = dnnl::memory(fwd_pd.workspace_desc(), detail::engine());
    if (!m.rescale) return;
    const auto scale_md = f32_md({1, 1, OH, OW}, Tag::nchw);
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow)
        m.scale_values.push_back(static_cast<float>(s.K * s.K) / static_cast<float>(dh.caffe[oh] * dw.caffe[ow]));
    m.scaled_values.resize(m.out_size);
    m.scale = dnnl::memory(scale_md, detail::engine(), m.scale_values.data());
    m.scaled = dnnl::memory(dst_md, detail::engine(), m.scaled_values.data());
    m.mul = dnnl::binary({{algorithm::binary_mul, dst_md, scale_md, dst_md}, detail::engine()});
  });
}

Pool2d::~Pool2d() = default;

void Pool2d::forward(std::span<float> out, std::span<const float> inp) {
  Impl& m = *impl_;
  DTS_ASSERT(out.size() == m.out_size, m.name + ": out must be (N, C, OH, OW)");
  DTS_ASSERT(inp.size() == m.inp_size, m.name + ": inp must be (N, C, H, W)");
  detail::guarded(m.name, [&] {
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, detail::set(m.src, inp.data())},
                                               {DNNL_ARG_DST, detail::set(m.dst, out.data())}};
    if (m.workspace) args.emplace(DNNL_ARG_WORKSPACE, m.workspace);
    m.fwd.execute(detail::stream(), args);
    if (m.rescale)
      m.mul.execute(detail::stream(), {{DNNL_ARG_SRC_0, m.dst}, {DNNL_ARG_SRC_1, m.scale}, {DNNL_ARG_DST, m.dst}});
    detail::stream().wait();
  });
}

void Pool2d::backward(std::span<float> dinp, std::span<const float> dout) {
  Impl& m = *impl_;
  DTS_ASSERT(dinp.size() == m.inp_size, m.name + ": dinp must be (N, C, H, W)");
  DTS_ASSERT(dout.size() == m.out_size, m.name + ": dout must be (N, C, OH, OW)");
  detail::guarded(m.name, [&] {
    detail::set(m.diff_dst, dout.data());
    if (m.rescale)  // d(out * scale) = dout * scale, then the include_padding backward
      m.mul.execute(detail::stream(),
                    {{DNNL_ARG_SRC_0, m.diff_dst}, {DNNL_ARG_SRC_1, m.scale}, {DNNL_ARG_DST, m.scaled}});
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DIFF_DST, m.rescale ? m.scaled : m.diff_dst},
                                               {DNNL_ARG_DIFF_SRC, detail::set(m.diff_src, dinp.data())}};
    if (m.workspace) args.emplace(DNNL_ARG_WORKSPACE, m.workspace);
    m.bwd.execute(detail::stream(), args);
    detail::stream().wait();
  });
}

}  // namespace dts::kernels::onednn
