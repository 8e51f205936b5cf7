// Sharding and minibatch streams (DESIGN.md §6: every permutation derives from the seed).
//   shard_indices: one Fisher-Yates permutation of [0, n) from Rng(seed, 0, "shard"), the same on every
//     rank; rank r takes the contiguous block [n*r/world, n*(r+1)/world) of it, in permuted order.
//   BatchStream: epoch e visits the shard's indices, sorted then Fisher-Yates shuffled with
//     Rng(seed, 0, "shuffle/<e>"), so epoch e's order depends only on (shard, seed, e), not on history.
// Pass a rank-specific seed (seed + rank) for independent per-rank orders.
#include <algorithm>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/rng.hpp"

namespace dts::data {
namespace {

// In-place Fisher-Yates (Knuth's Algorithm P): position i takes a uniform pick from [0, i].
void fisher_yates(std::vector<std::uint32_t>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace

std::vector<std::uint32_t> shard_indices(int n, int rank, int world, std::uint64_t seed) {
  DTS_ASSERT(n >= 0 && world >= 1, "shard_indices: n=" + std::to_string(n) + " world=" + std::to_string(world));
  DTS_ASSERT(rank >= 0 && rank < world, "shard_indices: rank " + std::to_string(rank) + " of " + std::to_string(world));
  std::vector<std::uint32_t> perm(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::uint32_t>(i);
  Rng rng(seed, 0, "shard");
  fisher_yates(perm, rng);
  // Rank r's block; sizes floor(n/world) or that plus one.
  const auto block = [&](int r) { return static_cast<std::ptrdiff_t>(std::int64_t{n} * r / world); };
  return {perm.begin() + block(rank), perm.begin() + block(rank + 1)};
}

BatchStream::BatchStream(const Dataset& ds, std::vector<std::uint32_t> indices, int batch, std::uint64_t seed)
    : ds_(&ds), indices_(std::move(indices)), batch_(batch), seed_(seed) {
  if (batch_ <= 0) throw InputError("", "batch size must be positive, got " + std::to_string(batch_));
  if (indices_.size() < static_cast<std::size_t>(batch_)) {
    throw InputError(
        "", "shard of " + std::to_string(indices_.size()) + " samples is smaller than batch " + std::to_string(batch_));
  }
  for (const std::uint32_t i : indices_) {
    DTS_ASSERT(i < static_cast<std::uint32_t>(ds.n),
               "BatchStream: index " + std::to_string(i) + " outside a data set of " + std::to_string(ds.n));
  }
  reshuffle();
}

// Fills x (batch, c, h, w) and y (batch); starts the next epoch when fewer than `batch` samples remain.
void BatchStream::next(std::span<float> x, std::span<std::int32_t> y) {
  const std::size_t sample = ds_->sample_size();
  const auto batch = static_cast<std::size_t>(batch_);
  DTS_ASSERT(x.size() == batch * sample && y.size() == batch,
             "BatchStream::next: buffers of " + std::to_string(x.size()) + " floats and " + std::to_string(y.size()) +
                 " labels for a batch of " + std::to_string(batch_));
  roll_epoch();
  for (std::size_t b = 0; b < batch; ++b) {
    const std::uint32_t i = indices_[pos_ + b];
    const auto src = ds_->sample(i);
    std::copy(src.begin(), src.end(), x.begin() + static_cast<std::ptrdiff_t>(b * sample));
    y[b] = ds_->y[i];
  }
  pos_ += batch;
}

// Fewer than `batch` samples left in this epoch: drop them and start the next epoch.
void BatchStream::roll_epoch() {
  if (pos_ + static_cast<std::size_t>(batch_) > indices_.size()) {
    ++epoch_;
    if (!next_indices_.empty()) indices_ = std::exchange(next_indices_, {});
    reshuffle();
  }
}

std::vector<std::uint32_t> BatchStream::peek() {
  roll_epoch();
  const auto from = indices_.begin() + static_cast<std::ptrdiff_t>(pos_);
  return {from, from + batch_};
}

void BatchStream::replace_last(std::span<const std::uint32_t> rows) {
  DTS_ASSERT(
      rows.size() == static_cast<std::size_t>(batch_) && pos_ >= rows.size(),
      "BatchStream::replace_last: " + std::to_string(rows.size()) + " rows after a batch of " + std::to_string(batch_));
  for (const std::uint32_t i : rows) {
    DTS_ASSERT(i < static_cast<std::uint32_t>(ds_->n), "BatchStream::replace_last: row " + std::to_string(i) +
                                                           " outside a data set of " + std::to_string(ds_->n));
  }
  std::copy(rows.begin(), rows.end(), indices_.begin() + static_cast<std::ptrdiff_t>(pos_ - rows.size()));
}

void BatchStream::reshard(std::vector<std::uint32_t> indices) {
  DTS_ASSERT(
      indices.size() >= static_cast<std::size_t>(batch_),
      "BatchStream::reshard: " + std::to_string(indices.size()) + " samples for a batch of " + std::to_string(batch_));
  for (const std::uint32_t i : indices) {
    DTS_ASSERT(i < static_cast<std::uint32_t>(ds_->n),
               "BatchStream::reshard: row " + std::to_string(i) + " outside a data set of " + std::to_string(ds_->n));
  }
  next_indices_ = std::move(indices);
}

void BatchStream::reshuffle() {
  // Sorting first makes the epoch's order independent of the previous epochs' shuffles.
  std::sort(indices_.begin(), indices_.end());
  Rng rng(seed_, 0, "shuffle/" + std::to_string(epoch_));
  fisher_yates(indices_, rng);
  pos_ = 0;
}

}  // namespace dts::data
