// ShardLayout (shard_layout.hpp).
#include "algorithms/mpca/shard_layout.hpp"

#include <algorithm>
#include <string>

#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"
#include "core/errors.hpp"
#include "kernels/model/grad_layers.hpp"

namespace dts::mpca {

ShardLayout::ShardLayout(Split split, int shards, std::size_t params, const std::vector<model::ParamBlock>& blocks) {
  if (split == Split::kEven) {
    for (int s = 0; s < shards; ++s) ranges_.push_back({collectives::ring_chunk(params, shards, s)});
    return;
  }
  DTS_ASSERT(shards == 2, "ShardLayout: largest_layer needs 2 shards, got " + std::to_string(shards));
  const auto layers = model::grad_layers(blocks);
  if (layers.size() < 2) {
    throw InputError("", "mpca: shard_split \"largest_layer\" needs a model of two layers or more (this one has " +
                             std::to_string(layers.size()) + ")");
  }
  const auto big =
      std::max_element(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.count < b.count; });
  ranges_.resize(2);
  ranges_[0].emplace_back(big->offset, big->count);
  if (big->offset > 0) ranges_[1].emplace_back(0, big->offset);
  const std::size_t after = big->offset + big->count;
  if (after < params) ranges_[1].emplace_back(after, params - after);
}

std::size_t ShardLayout::size(int s) const {
  std::size_t n = 0;
  for (const auto& r : ranges(s)) n += r.second;
  return n;
}

std::size_t ShardLayout::largest() const {
  std::size_t n = 0;
  for (int s = 0; s < shards(); ++s) n = std::max(n, size(s));
  return n;
}

void ShardLayout::gather(ConstSlice model, int s, Slice packed) const {
  for_each(s, [&](std::size_t off, std::size_t cnt, std::size_t p) {
    rules::copy(packed.sub(p, cnt), model.sub(off, cnt));
  });
}

void ShardLayout::scatter(ConstSlice packed, int s, Slice model) const {
  for_each(s, [&](std::size_t off, std::size_t cnt, std::size_t p) {
    rules::copy(model.sub(off, cnt), packed.sub(p, cnt));
  });
}

}  // namespace dts::mpca
