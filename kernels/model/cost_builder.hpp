// A model known only by its shapes (DESIGN.md §3, modeled numerics): its parameter layout and per-layer
// costs, with no kernels and no parameter memory. CostBuilder writes one layer by layer, tracking the
// activation shape as network.cpp's Builder does for real layers, with the same cost formulas
// (layer_cost.hpp), so a network described both ways costs the same. Branches (inception, residual) move the
// cursor back to an earlier activation with at() and join with concat() or add().
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "kernels/model/network.hpp"

namespace dts::model {

// Per-sample activation shape.
struct Shape {
  int c = 1, h = 1, w = 1;
  double size() const { return double(c) * h * w; }
};

// What modeled numerics needs of a model.
struct ModelProfile {
  std::string name;
  Shape input;      // the sample shape the model takes
  int outputs = 0;  // logits of the main classifier
  std::size_t num_params = 0;
  std::vector<ParamBlock> param_blocks;  // weight then bias of each trainable layer, in forward order
  std::vector<LayerCost> layers;         // forward order, losses included
  // Multiply-adds of one sample's forward pass in convolutions and fully connected layers (the convention of
  // published "GMACs" figures); 0 for a profile taken from a kernels Network.
  double fwd_macs_per_sample = 0;
};

// Layer names are numbered per kind, as in network.cpp ("conv1", "fc2", "pool3"; also bn, lrn, relu, dropout,
// flatten, concat, add). Throws dts::InputError when a shape does not fit (a window larger than its input,
// channels not divisible by the groups).
class CostBuilder {
 public:
  CostBuilder(std::string name, Shape input);
  Shape shape() const { return cur_; }
  // Moves the cursor to an earlier activation: the next layer reads `s` (a branch's input).
  CostBuilder& at(Shape s);

  // Convolution (OC, C/groups, k, k), output floor((H + 2 pad - k) / stride) + 1.
  CostBuilder& conv(int oc, int k, int stride = 1, int pad = 0, int groups = 1, bool bias = true);
  CostBuilder& fc(int out);                                                 // over the flattened input
  CostBuilder& maxpool(int k, int stride, int pad = 0, bool ceil = false);  // kernels::PoolShape's output size
  CostBuilder& avgpool(int k, int stride, int pad = 0, bool ceil = false);
  CostBuilder& global_avgpool();
  CostBuilder& relu();
  CostBuilder& dropout();
  CostBuilder& flatten();  // a view: zero cost, as network.cpp's Flatten
  // Batch normalization, training mode: 2 C parameters (scale, shift; the running statistics are buffers, not
  // parameters). fwd 4 flops and 3 tensor passes per value; bwd 8 flops and 5 passes.
  CostBuilder& bn();
  // Local response normalization across `size` channels (AlexNet, GoogLeNet): fwd 2 size + 3 flops and 3
  // passes per value (input, output, scale); bwd twice the flops, 5 passes.
  CostBuilder& lrn(int size = 5);
  // Joins branches along channels (same h, w): a copy each way, 2 tensor passes.
  CostBuilder& concat(const std::vector<Shape>& branches);
  // Residual sum of the current activation and `other` (same shape): 1 flop, 3 passes each way.
  CostBuilder& add(Shape other);
  // Softmax cross-entropy over the current activation's values.
  CostBuilder& loss(const std::string& name = "loss");

  // The finished profile; `outputs` is the main classifier's width.
  ModelProfile take(int outputs);

 private:
  CostBuilder& push(LayerCost c, Shape out);
  void params(const std::string& layer, std::size_t weights, std::size_t biases);
  CostBuilder& pool(bool max, int k, int stride, int pad, bool ceil);
  std::string next(const std::string& kind) { return kind + std::to_string(++count_[kind]); }
  bool bwd() const { return trainable_seen_; }  // layers before the first trainable one run no backward

  ModelProfile p_;
  Shape cur_;
  bool trainable_seen_ = false;  // the first trainable layer computes no data gradient
  std::map<std::string, int> count_;
};

}  // namespace dts::model
