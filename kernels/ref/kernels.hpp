// Reference kernels: plain loops, the oracle every optimized kernel is tested against (llm.c's *_naive).
// Templates only so that gradient checks can run in double; instantiated for float and double.
// Conventions: every *_backward takes its outputs first, then inputs, and OVERWRITES its outputs
// (oneDNN backward primitives write theirs). Shapes in comments; all tensors row-major.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/ref/shapes.hpp"

namespace dts::kernels::ref {

// Fully connected. inp (N, C), weight (OC, C), bias (OC), out (N, OC).
template <typename T>
void linear_forward(std::span<T> out, std::span<const T> inp, std::span<const T> weight, std::span<const T> bias, int N,
                    int C, int OC);
// dinp (N, C), dweight (OC, C), dbias (OC); dout (N, OC). An empty dinp skips the data gradient.
template <typename T>
void linear_backward(std::span<T> dinp, std::span<T> dweight, std::span<T> dbias, std::span<const T> dout,
                     std::span<const T> inp, std::span<const T> weight, int N, int C, int OC);

// 2-D convolution (cross-correlation, as every framework). inp (N, C, H, W), weight (OC, C, KH, KW),
// bias (OC), out (N, OC, OH, OW).
template <typename T>
void conv2d_forward(std::span<T> out, std::span<const T> inp, std::span<const T> weight, std::span<const T> bias,
                    const ConvShape& s);
// dinp (N, C, H, W), dweight (OC, C, KH, KW), dbias (OC); dout (N, OC, OH, OW). An empty dinp skips it.
template <typename T>
void conv2d_backward(std::span<T> dinp, std::span<T> dweight, std::span<T> dbias, std::span<const T> dout,
                     std::span<const T> inp, std::span<const T> weight, const ConvShape& s);

// Max pooling. out (N, C, OH, OW); argmax (N, C, OH, OW) holds the flat input index of each max, an index
// into the whole inp tensor (ties: the first in row-major window order).
template <typename T>
void maxpool2d_forward(std::span<T> out, std::span<std::int32_t> argmax, std::span<const T> inp, const PoolShape& s);
template <typename T>
void maxpool2d_backward(std::span<T> dinp, std::span<const T> dout, std::span<const std::int32_t> argmax,
                        const PoolShape& s);

// Average pooling, divisor = window size clipped to the padded input (Caffe, PyTorch count_include_pad).
template <typename T>
void avgpool2d_forward(std::span<T> out, std::span<const T> inp, const PoolShape& s);
template <typename T>
void avgpool2d_backward(std::span<T> dinp, std::span<const T> dout, const PoolShape& s);

// ReLU over n elements. Backward uses the forward input: dinp = dout * (inp > 0).
template <typename T>
void relu_forward(std::span<T> out, std::span<const T> inp);
template <typename T>
void relu_backward(std::span<T> dinp, std::span<const T> dout, std::span<const T> inp);

// Inverted dropout: out = inp * mask, where mask holds 0 or 1/(1-p). The mask is drawn by the caller
// (dropout_mask) so that both backends and the gradient check see the same mask.
// dropout_mask draws from dts::Rng(seed, /*rank=*/0, stream): fold the rank and step into seed, name the
// layer with stream. mask[i] = 0 with probability p, else 1/(1-p); p in [0, 1).
void dropout_mask(std::span<float> mask, float p, std::uint64_t seed, std::uint64_t stream);
template <typename T>
void dropout_forward(std::span<T> out, std::span<const T> inp, std::span<const float> mask);
template <typename T>
void dropout_backward(std::span<T> dinp, std::span<const T> dout, std::span<const float> mask);

// Softmax cross-entropy, mean over the batch. logits (N, K), labels (N) in [0, K), probs (N, K) written.
// Returns the mean loss. Backward: dlogits = (probs - onehot(labels)) / N.
template <typename T>
T softmax_xent_forward(std::span<T> probs, std::span<const T> logits, std::span<const std::int32_t> labels, int N,
                       int K);
template <typename T>
void softmax_xent_backward(std::span<T> dlogits, std::span<const T> probs, std::span<const std::int32_t> labels, int N,
                           int K);

}  // namespace dts::kernels::ref
