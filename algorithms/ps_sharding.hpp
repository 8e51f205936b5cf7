// How the MXNet-style parameter server (algorithms/ps.cpp) splits the model over its servers, as MXNet's
// kvstore does (src/kvstore/kvstore_dist.h, EncodeDefaultKey): the keys are the model's parameter blocks
// (Compute::param_blocks(): each trainable layer's weight, then its bias, in forward order, as MXNet's keys
// are its parameter arrays; key k = the k-th block); a block of fewer than `bigarray_bound` floats
// (MXNET_KVSTORE_BIGARRAY_BOUND) goes whole to server (k * 9973) mod S, a larger one is sliced across all S
// servers, slice i holding round(n (i+1) / S) - round(n i / S) floats. Each piece travels as a message of its
// own, as MXNet sends one per key and server, in back-propagation's order: a layer's pieces as soon as its
// gradient is final (model::grad_layers, the last layer first).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/api/vec.hpp"
#include "kernels/model/network.hpp"

namespace dts {

struct PsPiece {
  std::size_t offset = 0, count = 0;  // in the parameter vector
  int server = 0;
  std::size_t layer = 0;  // its layer in model::grad_layers (0 when the blocks name no layers)
};

class PsSharding {
 public:
  // `blocks` must tile [0, num_params) in order; none (a Compute without blocks) counts as one block.
  PsSharding(const std::vector<model::ParamBlock>& blocks, std::size_t num_params, int servers,
             std::size_t bigarray_bound);
  int servers() const { return static_cast<int>(by_server_.size()); }
  // Every piece, in vector order (empty pieces left out).
  const std::vector<PsPiece>& pieces() const { return pieces_; }
  // Server s's pieces in vector order, and their floats in all.
  const std::vector<PsPiece>& of(int server) const { return by_server_[static_cast<std::size_t>(server)]; }
  std::size_t floats(int server) const { return floats_[static_cast<std::size_t>(server)]; }
  // The servers that hold at least one piece, in rank order: those every worker talks to.
  const std::vector<int>& active() const { return active_; }
  // The layers (model::grad_layers of the blocks; one when they name none), and layer l's pieces in vector order.
  std::size_t layers() const { return by_layer_.size(); }
  const std::vector<PsPiece>& of_layer(std::size_t l) const { return by_layer_[l]; }
  // Server s's pieces in the order a worker pushes them: the last layer's first, each layer's in vector order.
  const std::vector<PsPiece>& push_order(int server) const { return push_order_[static_cast<std::size_t>(server)]; }
  // Server s's pieces of `full` into `packed` (floats(s) of them) and back. No-ops on modeled slices.
  void gather(int server, ConstSlice full, Slice packed) const;
  void scatter(int server, ConstSlice packed, Slice full) const;

 private:
  std::vector<PsPiece> pieces_;
  std::vector<std::vector<PsPiece>> by_server_, by_layer_, push_order_;
  std::vector<std::size_t> floats_;
  std::vector<int> active_;
};

}  // namespace dts
