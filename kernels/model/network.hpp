// A feed-forward network over one flat parameter buffer (llm.c's arena): the model zoo's MLP, LeNet,
// cifar10-quick, and a logistic regression for fast tests. The network owns activations and kernel
// objects (per batch size), never the parameters: callers pass params/grads spans of num_params() floats.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/data/dataset.hpp"

namespace dts::model {

enum class Backend { kRef, kOnednn };

// Work of one layer, used by the simulator's device model. Per-sample terms scale with the batch;
// param_bytes is read once per forward and read+written once per backward.
struct LayerCost {
  std::string name;
  double fwd_flops_per_sample = 0;
  double bwd_flops_per_sample = 0;  // data + weight gradients
  double fwd_bytes_per_sample = 0;  // activations read and written
  double bwd_bytes_per_sample = 0;
  double param_bytes = 0;
  // The kernels a GPU framework launches for the layer in each pass (Caffe with cuDNN; layer_cost.hpp), and how
  // many of them are GEMMs or convolutions (library calls whose efficiency falls when they are small). The
  // device model's launch, per-layer and small-kernel terms read them.
  double fwd_kernels = 0, bwd_kernels = 0;
  double fwd_gemms = 0, bwd_gemms = 0;
};

// One named block of the parameter buffer (a layer's weight or bias), for per-layer communication.
struct ParamBlock {
  std::string name;
  std::size_t offset = 0, size = 0;
};

struct EvalResult {
  std::int64_t correct = 0, total = 0;
  double mean_loss = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0; }
};

// Not thread-safe (forward_backward and evaluate reuse the network's buffers). Since parameters are passed in,
// one Network can serve many simulated workers in turn; activation memory grows to the largest batch seen.
class Network {
 public:
  virtual ~Network() = default;
  virtual const std::string& name() const = 0;
  virtual std::size_t num_params() const = 0;
  virtual std::vector<ParamBlock> param_blocks() const = 0;
  virtual std::vector<LayerCost> cost() const = 0;
  // PyTorch's default initialisation (kaiming_uniform(a=sqrt 5) weights, U(+-1/sqrt(fan_in)) biases),
  // drawn from Rng(seed, 0, "init"): the same seed gives the same params on every rank.
  virtual void init_params(std::span<float> params, std::uint64_t seed) const = 0;
  // One minibatch: forward, mean softmax cross-entropy, backward. x (N, c, h, w), y (N). Overwrites grads.
  // Dropout masks come from Rng(dropout_seed, ...). Returns the mean loss.
  virtual float forward_backward(std::span<const float> params, std::span<float> grads, std::span<const float> x,
                                 std::span<const std::int32_t> y, int N, std::uint64_t dropout_seed) = 0;
  // Inference over a whole data set (dropout off), in batches of `batch`.
  virtual EvalResult evaluate(std::span<const float> params, const data::Dataset& ds, int batch = 1000) = 0;
};

// Names: "mlp" (784-1024-1024-1024-10, ReLU), "mlp_dropout" (the same with dropout 0.2 on the input and 0.5
// after each hidden layer, papers/elastic_gossip.md), "lenet" (Caffe LeNet), "cifar10_quick" (Caffe),
// "logreg" (one linear layer). Input shape (c, h, w) and classes come from the data set.
// Throws dts::InputError on an unknown name or an input shape the network cannot take.
std::unique_ptr<Network> make_network(const std::string& name, Backend backend, int c, int h, int w, int classes);
std::vector<std::string> network_names();

}  // namespace dts::model
