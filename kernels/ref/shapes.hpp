// Shapes shared by the reference and oneDNN kernels. All tensors are dense, row-major, NCHW.
#pragma once

namespace dts::kernels {

struct ConvShape {
  int N = 1, C = 1, H = 1, W = 1;  // input (N, C, H, W)
  int OC = 1, KH = 1, KW = 1;      // weight (OC, C, KH, KW), bias (OC)
  int stride = 1, pad = 0;
  int OH() const { return (H + 2 * pad - KH) / stride + 1; }
  int OW() const { return (W + 2 * pad - KW) / stride + 1; }
};

// Pooling; ceil_mode as in Caffe (and PyTorch ceil_mode=True): the last window may overhang the input.
// An overhanging window is clipped to the padded input (avg pool divides by the clipped size, as Caffe does).
struct PoolShape {
  int N = 1, C = 1, H = 1, W = 1;  // input (N, C, H, W)
  int K = 2, stride = 2, pad = 0;
  bool ceil_mode = false;
  int OH() const { return out_dim(H); }
  int OW() const { return out_dim(W); }

 private:
  int out_dim(int in) const {
    const int span = in + 2 * pad - K;
    int out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && pad > 0 && (out - 1) * stride >= in + pad) --out;  // last window must start inside
    return out;
  }
};

}  // namespace dts::kernels
