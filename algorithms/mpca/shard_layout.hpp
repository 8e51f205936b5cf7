// Where MPCA's S shards lie in the parameter vector (papers/mpca_sgd.md §4.4). `even`: S contiguous ranges of
// nearly equal float counts (ring_chunk). `largest_layer` (S = 2, the paper's VGG-A, whose framework splits only
// at layer boundaries): shard 0 is the model's largest layer (VGG-A's first FC layer) and shard 1 all the other
// layers, two ranges when the largest layer lies between others. A shard travels packed: its ranges one after
// another, in the vector's order.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "algorithms/api/vec.hpp"
#include "kernels/model/network.hpp"

namespace dts::mpca {

enum class Split { kEven, kLargestLayer };

class ShardLayout {
 public:
  // InputError for largest_layer on a model of one layer (its second shard would be empty).
  ShardLayout(Split split, int shards, std::size_t params, const std::vector<model::ParamBlock>& blocks);
  int shards() const { return static_cast<int>(ranges_.size()); }
  std::size_t size(int s) const;  // floats of shard s, packed
  std::size_t largest() const;
  // {offset in the vector, count} of each range of shard s, in the vector's order.
  const std::vector<std::pair<std::size_t, std::size_t>>& ranges(int s) const {
    return ranges_[static_cast<std::size_t>(s)];
  }
  // Calls f(vector offset, count, packed offset) for each range of shard s.
  template <class F>
  void for_each(int s, F&& f) const {
    std::size_t packed = 0;
    for (const auto& [off, cnt] : ranges(s)) {
      f(off, cnt, packed);
      packed += cnt;
    }
  }
  // Shard s of `model` into `packed` (size(s) floats), and back.
  void gather(ConstSlice model, int s, Slice packed) const;
  void scatter(ConstSlice packed, int s, Slice model) const;

 private:
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> ranges_;
};

}  // namespace dts::mpca
