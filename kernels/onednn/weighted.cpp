// Execution of forward / backward-data / backward-weights for Linear and Conv2d (see weighted.hpp): bind
// user buffers, reorder inputs into the primitives' layouts, execute, reorder outputs back to plain.
#include "kernels/onednn/weighted.hpp"

namespace dts::kernels::onednn::detail {

using Dir = Staged::Dir;

WeightedPrimitives::WeightedPrimitives(const UserMds& user, const dnnl::primitive_desc& fwd_pd,
                                       const dnnl::primitive_desc& bwd_data_pd,
                                       const dnnl::primitive_desc& bwd_weights_pd)
    : fwd_(fwd_pd),
      bwd_data_(bwd_data_pd),
      bwd_weights_(bwd_weights_pd),
      src_(user.src, fwd_pd.src_desc(), Dir::kIn),
      weights_(user.weights, fwd_pd.weights_desc(), Dir::kIn),
      dst_(user.dst, fwd_pd.dst_desc(), Dir::kOut),
      bd_diff_src_(user.src, bwd_data_pd.diff_src_desc(), Dir::kOut),
      bd_weights_(user.weights, bwd_data_pd.weights_desc(), Dir::kIn),
      bd_diff_dst_(user.dst, bwd_data_pd.diff_dst_desc(), Dir::kIn),
      bw_src_(user.src, bwd_weights_pd.src_desc(), Dir::kIn),
      bw_diff_weights_(user.weights, bwd_weights_pd.diff_weights_desc(), Dir::kOut),
      bw_diff_dst_(user.dst, bwd_weights_pd.diff_dst_desc(), Dir::kIn),
      bias_(unbound(user.bias)),
      diff_bias_(unbound(user.bias)),
      share_diff_dst_(bd_diff_dst_.prim_md() == bw_diff_dst_.prim_md()) {}

void WeightedPrimitives::forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
                                 std::span<const float> bias) {
  fwd_.execute(stream(), {{DNNL_ARG_SRC, src_.input(inp.data())},
                          {DNNL_ARG_WEIGHTS, weights_.input(weight.data())},
                          {DNNL_ARG_BIAS, set(bias_, bias.data())},
                          {DNNL_ARG_DST, dst_.output(out.data())}});
  dst_.store();
  stream().wait();
}

void WeightedPrimitives::backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias,
                                  std::span<const float> dout, std::span<const float> inp,
                                  std::span<const float> weight) {
  const dnnl::memory* diff_dst = nullptr;  // dout in the backward-weights layout
  if (!dinp.empty()) {
    const dnnl::memory& bd_diff_dst = bd_diff_dst_.input(dout.data());
    bwd_data_.execute(stream(), {{DNNL_ARG_DIFF_DST, bd_diff_dst},
                                 {DNNL_ARG_WEIGHTS, bd_weights_.input(weight.data())},
                                 {DNNL_ARG_DIFF_SRC, bd_diff_src_.output(dinp.data())}});
    bd_diff_src_.store();
    if (share_diff_dst_) diff_dst = &bd_diff_dst;
  }
  if (diff_dst == nullptr) diff_dst = &bw_diff_dst_.input(dout.data());
  bwd_weights_.execute(stream(), {{DNNL_ARG_SRC, bw_src_.input(inp.data())},
                                  {DNNL_ARG_DIFF_DST, *diff_dst},
                                  {DNNL_ARG_DIFF_WEIGHTS, bw_diff_weights_.output(dweight.data())},
                                  {DNNL_ARG_DIFF_BIAS, set(diff_bias_, dbias.data())}});
  bw_diff_weights_.store();
  stream().wait();
}

}  // namespace dts::kernels::onednn::detail
