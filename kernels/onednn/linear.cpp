// oneDNN fully connected layer (inner product), same maths as ref::linear_*, primitives built once here.
// Descriptors are plain (nc, oi): with format_tag::any oneDNN 2.6 picks brgemm with blocked weights, and
// the weight reorders that the caller's plain buffers then need every step made forward + backward 10-80%
// slower on our shapes (800x500, 784x1024, 1024x1024, 1024x64, 1 thread) than plain gemm:jit.
#include <string>

#include "kernels/onednn/layers.hpp"
#include "kernels/onednn/weighted.hpp"

namespace dts::kernels::onednn {

using detail::Dims;
using detail::f32_md;
using detail::Tag;

struct Linear::Impl {
  std::string name;  // layer and shape, for error messages
  int N, C, OC;
  detail::WeightedPrimitives prims;
};

Linear::Linear(int N, int C, int OC) : impl_(std::make_unique<Impl>()) {
  impl_->name =
      "onednn::Linear(N=" + std::to_string(N) + ", C=" + std::to_string(C) + ", OC=" + std::to_string(OC) + ")";
  impl_->N = N, impl_->C = C, impl_->OC = OC;
  DTS_ASSERT(N > 0 && C > 0 && OC > 0, impl_->name + ": empty shape");
  detail::guarded(impl_->name, [&] {
    const Dims src{N, C}, wei{OC, C}, bias{OC}, dst{N, OC};
    const detail::WeightedPrimitives::UserMds user{f32_md(src, Tag::nc), f32_md(wei, Tag::oi), f32_md(bias, Tag::x),
                                                   f32_md(dst, Tag::nc)};
    using dnnl::prop_kind;
    const dnnl::inner_product_forward::primitive_desc fwd_pd(
        {prop_kind::forward_training, user.src, user.weights, user.bias, user.dst}, detail::engine());
    const dnnl::inner_product_backward_data::primitive_desc bwd_data_pd({user.src, user.weights, user.dst},
                                                                        detail::engine(), fwd_pd);
    const dnnl::inner_product_backward_weights::primitive_desc bwd_weights_pd(
        {user.src, user.weights, user.bias, user.dst}, detail::engine(), fwd_pd);
    impl_->prims = detail::WeightedPrimitives(user, fwd_pd, bwd_data_pd, bwd_weights_pd);
  });
}

Linear::~Linear() = default;

void Linear::forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                     std::span<const float> bias) {
  const Impl& m = *impl_;
  DTS_ASSERT(out.size() == static_cast<std::size_t>(m.N) * m.OC, m.name + ": out must be (N, OC)");
  DTS_ASSERT(inp.size() == static_cast<std::size_t>(m.N) * m.C, m.name + ": inp must be (N, C)");
  DTS_ASSERT(weight.size() == static_cast<std::size_t>(m.OC) * m.C, m.name + ": weight must be (OC, C)");
  DTS_ASSERT(bias.size() == static_cast<std::size_t>(m.OC), m.name + ": bias must be (OC)");
  detail::guarded(m.name, [&] { impl_->prims.forward(out, inp, weight, bias); });
}

void Linear::backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                      std::span<const float> dout, std::span<const float> inp, std::span<const float> weight) {
  const Impl& m = *impl_;
  DTS_ASSERT(dinp.empty() || dinp.size() == static_cast<std::size_t>(m.N) * m.C, m.name + ": dinp must be (N, C)");
  DTS_ASSERT(dweight.size() == static_cast<std::size_t>(m.OC) * m.C, m.name + ": dweight must be (OC, C)");
  DTS_ASSERT(dbias.size() == static_cast<std::size_t>(m.OC), m.name + ": dbias must be (OC)");
  DTS_ASSERT(dout.size() == static_cast<std::size_t>(m.N) * m.OC, m.name + ": dout must be (N, OC)");
  DTS_ASSERT(inp.size() == static_cast<std::size_t>(m.N) * m.C, m.name + ": inp must be (N, C)");
  DTS_ASSERT(weight.size() == static_cast<std::size_t>(m.OC) * m.C, m.name + ": weight must be (OC, C)");
  detail::guarded(m.name, [&] { impl_->prims.backward(dinp, dweight, dbias, dout, inp, weight); });
}

}  // namespace dts::kernels::onednn
