// oneDNN ReLU (eltwise_relu forward / backward from the forward input) and inverted dropout (binary_mul of
// the data with a caller-drawn mask, the same primitive serving forward and backward since both are
// "x * mask"). Tensors are flat (format x): n elements, any shape.
#include <string>

#include "kernels/onednn/engine.hpp"
#include "kernels/onednn/layers.hpp"

namespace dts::kernels::onednn {

using detail::f32_md;
using detail::Tag;

struct Relu::Impl {
  std::string name;  // layer and size, for error messages
  std::size_t n = 0;
  dnnl::eltwise_forward fwd;
  dnnl::eltwise_backward bwd;
  dnnl::memory src, dst, diff_src, diff_dst;
};

Relu::Relu(std::size_t n) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = "onednn::Relu(n=" + std::to_string(n) + ")";
  m.n = n;
  DTS_ASSERT(n > 0, m.name + ": empty tensor");
  detail::guarded(m.name, [&] {
    using dnnl::algorithm;
    const auto md = f32_md({static_cast<dnnl::memory::dim>(n)}, Tag::x);
    const dnnl::eltwise_forward::primitive_desc fwd_pd(
        {dnnl::prop_kind::forward_training, algorithm::eltwise_relu, md, 0.0f, 0.0f}, detail::engine());
    const dnnl::eltwise_backward::primitive_desc bwd_pd({algorithm::eltwise_relu, md, md, 0.0f, 0.0f}, detail::engine(),
                                                        fwd_pd);
    m.fwd = dnnl::eltwise_forward(fwd_pd);
    m.bwd = dnnl::eltwise_backward(bwd_pd);
    m.src = detail::unbound(md), m.dst = detail::unbound(md);
    m.diff_src = detail::unbound(md), m.diff_dst = detail::unbound(md);
  });
}

Relu::~Relu() = default;

void Relu::forward(std::span<float> out, std::span<const float> inp) {
  Impl& m = *impl_;
  DTS_ASSERT(out.size() == m.n && inp.size() == m.n, m.name + ": out and inp must hold n elements");
  detail::guarded(m.name, [&] {
    m.fwd.execute(detail::stream(),
                  {{DNNL_ARG_SRC, detail::set(m.src, inp.data())}, {DNNL_ARG_DST, detail::set(m.dst, out.data())}});
    detail::stream().wait();
  });
}

void Relu::backward(std::span<float> dinp, std::span<const float> dout, std::span<const float> inp) {
  Impl& m = *impl_;
  DTS_ASSERT(dinp.size() == m.n && dout.size() == m.n && inp.size() == m.n,
             m.name + ": dinp, dout and inp must hold n elements");
  detail::guarded(m.name, [&] {
    m.bwd.execute(detail::stream(), {{DNNL_ARG_SRC, detail::set(m.src, inp.data())},
                                     {DNNL_ARG_DIFF_DST, detail::set(m.diff_dst, dout.data())},
                                     {DNNL_ARG_DIFF_SRC, detail::set(m.diff_src, dinp.data())}});
    detail::stream().wait();
  });
}

struct Dropout::Impl {
  std::string name;
  std::size_t n = 0;
  dnnl::binary mul;  // dst = src0 * src1 (the mask)
  dnnl::memory src0, mask, dst;

  void run(std::span<float> y, std::span<const float> x, std::span<const float> mask_values) {
    DTS_ASSERT(y.size() == n && x.size() == n && mask_values.size() == n, name + ": tensors must hold n elements");
    detail::guarded(name, [&] {
      mul.execute(detail::stream(), {{DNNL_ARG_SRC_0, detail::set(src0, x.data())},
                                     {DNNL_ARG_SRC_1, detail::set(mask, mask_values.data())},
                                     {DNNL_ARG_DST, detail::set(dst, y.data())}});
      detail::stream().wait();
    });
  }
};

Dropout::Dropout(std::size_t n) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.name = "onednn::Dropout(n=" + std::to_string(n) + ")";
  m.n = n;
  DTS_ASSERT(n > 0, m.name + ": empty tensor");
  detail::guarded(m.name, [&] {
    const auto md = f32_md({static_cast<dnnl::memory::dim>(n)}, Tag::x);
    m.mul = dnnl::binary({{dnnl::algorithm::binary_mul, md, md, md}, detail::engine()});
    m.src0 = detail::unbound(md), m.mask = detail::unbound(md), m.dst = detail::unbound(md);
  });
}

Dropout::~Dropout() = default;

void Dropout::forward(std::span<float> out, std::span<const float> inp, std::span<const float> mask) {
  impl_->run(out, inp, mask);
}

void Dropout::backward(std::span<float> dinp, std::span<const float> dout, std::span<const float> mask) {
  impl_->run(dinp, dout, mask);
}

}  // namespace dts::kernels::onednn
