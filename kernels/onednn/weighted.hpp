// Internal to kernels/onednn: runs the three primitives of a layer with weights and a bias (inner product,
// convolution) over plain user buffers. The primitives were created with format_tag::any for src, weights
// and dst, so they may pick blocked layouts; every such tensor goes through a detail::Staged reorder.
// The bias is always plain (x). Linear and Conv2d differ only in how they build the descriptors.
#pragma once

#include <span>

#include "kernels/onednn/engine.hpp"

namespace dts::kernels::onednn::detail {

class WeightedPrimitives {
 public:
  // Plain layouts of the caller's buffers: src and dst (nc or nchw), weights (oi or oihw), bias (x).
  struct UserMds {
    dnnl::memory::desc src, weights, bias, dst;
  };
  WeightedPrimitives() = default;
  // The backward descriptors were hinted by fwd_pd. Primitives are created here, once.
  WeightedPrimitives(const UserMds& user, const dnnl::primitive_desc& fwd_pd, const dnnl::primitive_desc& bwd_data_pd,
                     const dnnl::primitive_desc& bwd_weights_pd);

  // Spans are checked by the caller (Linear, Conv2d); shapes as in kernels/ref/kernels.hpp.
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
               std::span<const float> bias);
  // An empty dinp skips the backward-data primitive.
  void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
                std::span<const float> inp, std::span<const float> weight);

 private:
  dnnl::primitive fwd_, bwd_data_, bwd_weights_;
  Staged src_, weights_, dst_;                     // forward
  Staged bd_diff_src_, bd_weights_, bd_diff_dst_;  // backward data
  Staged bw_src_, bw_diff_weights_, bw_diff_dst_;  // backward weights
  dnnl::memory bias_, diff_bias_;
  bool share_diff_dst_ = false;  // both backward primitives want dout in the same layout: reorder it once
};

}  // namespace dts::kernels::onednn::detail
