// grad_layers(): parameter blocks grouped by layer.
#include "kernels/model/grad_layers.hpp"

namespace dts::model {
namespace {
// "conv1.weight" -> "conv1"; a name without a ".weight" / ".bias" suffix is its own layer.
std::string layer_of(const std::string& block) {
  for (const std::string suffix : {".weight", ".bias"}) {
    if (block.size() > suffix.size() && block.ends_with(suffix)) return block.substr(0, block.size() - suffix.size());
  }
  return block;
}
}  // namespace

std::vector<GradLayer> grad_layers(const std::vector<ParamBlock>& blocks) {
  std::vector<GradLayer> layers;
  for (const ParamBlock& b : blocks) {
    const std::string name = layer_of(b.name);
    if (!layers.empty() && layers.back().name == name && layers.back().offset + layers.back().count == b.offset) {
      layers.back().count += b.size;
    } else {
      layers.push_back({name, b.offset, b.size});
    }
  }
  return layers;
}

}  // namespace dts::model
