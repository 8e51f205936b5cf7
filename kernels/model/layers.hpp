// Internal to kernels/model: the layers a Network is a sequence of. Each layer runs either the reference
// kernels (Backend::kRef, float) or the oneDNN classes (Backend::kOnednn); oneDNN objects are built per
// batch size on first use and cached, because training and evaluation batches differ. Layers own only
// what must survive from forward to backward (dropout masks, max-pool argmax); activations and their
// gradients belong to the Network. Shapes are per sample, (c, h, w); every tensor is (N, c, h, w) row-major.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "kernels/model/network.hpp"

namespace dts::model::detail {

// Per-sample shape of an activation.
struct Dims {
  int c = 1, h = 1, w = 1;
  std::size_t size() const { return static_cast<std::size_t>(c) * h * w; }
};

// What forward() needs beyond tensors: training mode turns dropout on; its mask is
// ref::dropout_mask(mask, p, dropout_seed, stream = the layer's index in the network).
struct FwdCtx {
  bool train = true;
  std::uint64_t dropout_seed = 0;
  std::uint64_t stream = 0;
};

class Layer {
 public:
  Layer(std::string name, Dims in, Dims out) : name_(std::move(name)), in_(in), out_(out) {}
  virtual ~Layer() = default;
  const std::string& name() const { return name_; }
  Dims in() const { return in_; }
  Dims out() const { return out_; }
  // Parameters: weight_size() floats then bias_size() floats, contiguous in the network's buffer.
  virtual std::size_t weight_size() const { return 0; }
  virtual std::size_t bias_size() const { return 0; }
  std::size_t num_params() const { return weight_size() + bias_size(); }
  // PyTorch's fan_in: C for a linear layer, C*KH*KW for a convolution (init bound 1/sqrt(fan_in)).
  virtual int fan_in() const { return 1; }
  // A view (Flatten) does no work: its output is its input's memory, and so is its output gradient.
  virtual bool is_view() const { return false; }

  // out (N, out), inp (N, in), params (num_params()).
  virtual void forward(std::span<float> out, std::span<const float> inp, std::span<const float> params, int N,
                       const FwdCtx& ctx) = 0;
  // Overwrites dinp (N, in) and dparams (num_params()). An empty dinp skips the data gradient.
  // dout (N, out); inp (N, in) as given to the forward() just before; params as in that forward().
  virtual void backward(std::span<float> dinp, std::span<float> dparams, std::span<const float> dout,
                        std::span<const float> inp, std::span<const float> params, int N) = 0;
  // Per-sample work (see network.cpp for the formulas); need_dinp false when the data gradient is
  // skipped, bwd false when no backward runs at all (nothing trainable before or in this layer).
  virtual LayerCost cost(bool need_dinp, bool bwd) const = 0;

 private:
  std::string name_;
  Dims in_, out_;
};

// Kernel objects of one layer, one per batch size N, built on first use.
template <typename K>
class PerBatch {
 public:
  template <typename Make>
  K& get(int N, Make make) {
    auto& slot = by_n_[N];
    if (!slot) slot = make();
    return *slot;
  }

 private:
  std::map<int, std::unique_ptr<K>> by_n_;
};

// Called where a oneDNN kernel is needed in a build without oneDNN; make_network refuses Backend::kOnednn
// in such a build, so reaching it is a broken invariant.
[[noreturn]] void no_onednn();

// Factories. Each throws dts::InputError when the input shape is too small for the layer.
std::unique_ptr<Layer> make_linear(Backend b, std::string name, Dims in, int out_features);
std::unique_ptr<Layer> make_conv(Backend b, std::string name, Dims in, int out_channels, int kernel, int pad);
std::unique_ptr<Layer> make_pool(Backend b, std::string name, Dims in, bool max, int kernel, int stride,
                                 bool ceil_mode);
std::unique_ptr<Layer> make_relu(Backend b, std::string name, Dims in);
std::unique_ptr<Layer> make_dropout(Backend b, std::string name, Dims in, float p);
std::unique_ptr<Layer> make_flatten(std::string name, Dims in);

// Mean softmax cross-entropy over logits (N, K); keeps the probabilities for backward.
class SoftmaxXentLoss {
 public:
  SoftmaxXentLoss(Backend b, int K);
  ~SoftmaxXentLoss();
  // logits (N, K), labels (N). Returns the mean loss; probs() then holds (N, K).
  float forward(std::span<const float> logits, std::span<const std::int32_t> labels, int N);
  // dlogits (N, K) = (probs - onehot) / N, for the labels of the last forward().
  void backward(std::span<float> dlogits, std::span<const std::int32_t> labels, int N);
  std::span<const float> probs(int N) const;
  LayerCost cost() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dts::model::detail
