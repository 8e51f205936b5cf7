// PsSharding: MXNet's kvstore key sharding over the parameter server's servers.
#include "algorithms/ps_sharding.hpp"

#include <cmath>

#include "algorithms/rules/vector_ops.hpp"
#include "core/errors.hpp"
#include "kernels/model/grad_layers.hpp"

namespace dts {

PsSharding::PsSharding(const std::vector<model::ParamBlock>& blocks, std::size_t num_params, int servers,
                       std::size_t bigarray_bound)
    : by_server_(static_cast<std::size_t>(servers)), floats_(static_cast<std::size_t>(servers), 0) {
  DTS_ASSERT(servers >= 1, "PsSharding: at least one server");
  std::vector<model::ParamBlock> keys = blocks;
  if (keys.empty()) keys.push_back({"all", 0, num_params});
  std::vector<model::GradLayer> layers = model::grad_layers(blocks);
  if (layers.empty()) layers.push_back({"all", 0, num_params});
  const auto layer_of = [&](std::size_t offset) {
    std::size_t l = 0;
    while (l + 1 < layers.size() && offset >= layers[l + 1].offset) ++l;
    return l;
  };
  std::size_t next = 0;
  for (std::size_t key = 0; key < keys.size(); ++key) {
    const auto& b = keys[key];
    DTS_ASSERT(b.offset == next, "PsSharding: param_blocks must tile the parameter vector in order");
    next = b.offset + b.size;
    if (b.size < bigarray_bound) {  // whole, to MXNet's "random" server
      const auto s = static_cast<int>((key * 9973) % static_cast<std::size_t>(servers));
      if (b.size > 0) pieces_.push_back({b.offset, b.size, s, layer_of(b.offset)});
      continue;
    }
    const double per = static_cast<double>(b.size) / servers;
    for (int s = 0; s < servers; ++s) {  // sliced evenly across all servers
      const auto from = static_cast<std::size_t>(std::round(per * s));
      const auto to = static_cast<std::size_t>(std::round(per * (s + 1)));
      if (to > from) pieces_.push_back({b.offset + from, to - from, s, layer_of(b.offset)});
    }
  }
  DTS_ASSERT(next == num_params, "PsSharding: param_blocks must cover the parameter vector");
  by_layer_.resize(layers.size());
  for (const auto& p : pieces_) {
    by_server_[static_cast<std::size_t>(p.server)].push_back(p);
    floats_[static_cast<std::size_t>(p.server)] += p.count;
    by_layer_[p.layer].push_back(p);
  }
  push_order_.resize(by_server_.size());
  for (std::size_t l = by_layer_.size(); l-- > 0;) {
    for (const auto& p : by_layer_[l]) push_order_[static_cast<std::size_t>(p.server)].push_back(p);
  }
  for (int s = 0; s < servers; ++s) {
    if (floats(s) > 0) active_.push_back(s);
  }
}

void PsSharding::gather(int server, ConstSlice full, Slice packed) const {
  DTS_ASSERT(packed.count == floats(server), "PsSharding::gather: wrong size");
  std::size_t at = 0;
  for (const auto& p : of(server)) {
    rules::copy(packed.sub(at, p.count), full.sub(p.offset, p.count));
    at += p.count;
  }
}

void PsSharding::scatter(int server, ConstSlice packed, Slice full) const {
  DTS_ASSERT(packed.count == floats(server), "PsSharding::scatter: wrong size");
  std::size_t at = 0;
  for (const auto& p : of(server)) {
    rules::copy(full.sub(p.offset, p.count), packed.sub(at, p.count));
    at += p.count;
  }
}

}  // namespace dts
