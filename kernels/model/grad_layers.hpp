// The trainable layers of a parameter vector, for communication that follows back-propagation layer by layer
// (AGD's per-layer allreduce): the consecutive blocks "L.weight", "L.bias" of one layer L merged into one
// contiguous range named L, in forward order. A block with another name is a layer of its own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/model/network.hpp"

namespace dts::model {

struct GradLayer {
  std::string name;
  std::size_t offset = 0, count = 0;
};

std::vector<GradLayer> grad_layers(const std::vector<ParamBlock>& blocks);

}  // namespace dts::model
