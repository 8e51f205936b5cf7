// oneDNN kernels: the same maths and argument order as kernels/ref/kernels.hpp, in float.
// Each class builds its primitives once for one shape (batch size included) and runs them many times,
// as in oneDNN's cnn_training_f32.cpp; user buffers are plain row-major (nc, nchw, oihw). An empty `dinp`
// span skips the data gradient (the first layer of a network needs none).
// oneDNN errors are caught here and rethrown as dts::KernelError naming the layer and its shape.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/ref/shapes.hpp"

namespace dts::kernels::onednn {

// Fully connected. inp (N, C), weight (OC, C), bias (OC), out (N, OC).
class Linear {
 public:
  Linear(int N, int C, int OC);
  ~Linear();
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
               std::span<const float> bias);
  void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
                std::span<const float> inp, std::span<const float> weight);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// inp (N, C, H, W), weight (OC, C, KH, KW), bias (OC), out (N, OC, OH, OW).
class Conv2d {
 public:
  explicit Conv2d(const ConvShape& s);
  ~Conv2d();
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> weight,
               std::span<const float> bias);
  void backward(std::span<float> dinp, std::span<float> dweight, std::span<float> dbias, std::span<const float> dout,
                std::span<const float> inp, std::span<const float> weight);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Max or average pooling (PoolShape semantics). The max-pool workspace lives inside the object, so
// backward() must follow the forward() of the same input.
class Pool2d {
 public:
  enum class Kind { kMax, kAvg };
  Pool2d(Kind kind, const PoolShape& s);
  ~Pool2d();
  void forward(std::span<float> out, std::span<const float> inp);
  void backward(std::span<float> dinp, std::span<const float> dout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ReLU over n elements (oneDNN eltwise). backward uses the forward input.
class Relu {
 public:
  explicit Relu(std::size_t n);
  ~Relu();
  void forward(std::span<float> out, std::span<const float> inp);
  void backward(std::span<float> dinp, std::span<const float> dout, std::span<const float> inp);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Softmax cross-entropy, mean over the batch (oneDNN softmax forward; the rest is elementwise).
// logits (N, K), labels (N), probs (N, K). Same contract as ref::softmax_xent_*.
class SoftmaxXent {
 public:
  SoftmaxXent(int N, int K);
  ~SoftmaxXent();
  float forward(std::span<float> probs, std::span<const float> logits, std::span<const std::int32_t> labels);
  void backward(std::span<float> dlogits, std::span<const float> probs, std::span<const std::int32_t> labels);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Inverted dropout with a caller-drawn mask (ref::dropout_mask), as a oneDNN binary multiply.
class Dropout {
 public:
  explicit Dropout(std::size_t n);
  ~Dropout();
  void forward(std::span<float> out, std::span<const float> inp, std::span<const float> mask);
  void backward(std::span<float> dinp, std::span<const float> dout, std::span<const float> mask);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dts::kernels::onednn
