// In-memory labelled data sets, their readers, and sharding over workers.
// Readers throw dts::InputError naming the file on a missing, truncated or malformed file, and on one that is
// not a regular file. They stream (kernels/data/byte_stream.hpp): a header is checked before what it
// promises is read, every size is bounded by the header, by the file and by the limits below, and no memory
// in proportion to a file is taken before the file has been checked whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "kernels/huge_pages.hpp"

namespace dts::data {

class ByteStream;

// The most sample values (pixels, features) one file or one synthetic set may hold: 2^30, 4 GiB as floats,
// well above Fashion-MNIST (47 M) and CIFAR-10 (184 M). A header or a size beyond it is an InputError.
inline constexpr std::uint64_t kMaxSampleValues = std::uint64_t{1} << 30;
// The most records a CIFAR-10 batch may hold: 60000, all of CIFAR-10 (a batch file holds 10000).
inline constexpr std::uint64_t kMaxCifarRecords = 60000;

// n samples of shape (c, h, w), pixels as float (readers scale bytes to [0, 1]); labels in [0, classes).
struct Dataset {
  std::string name;
  int n = 0, c = 0, h = 0, w = 0;
  int classes = 0;
  dts::BigFloats x;             // (n, c, h, w)
  std::vector<std::int32_t> y;  // (n)
  std::size_t sample_size() const { return static_cast<std::size_t>(c) * h * w; }
  std::span<const float> sample(std::size_t i) const { return {x.data() + i * sample_size(), sample_size()}; }
};

// IDX (MNIST, Fashion-MNIST) image + label files, raw or gzip (detected by magic bytes, not by name).
// Unsigned-byte IDX3 images and IDX1 labels only; classes = max(10, max label + 1); c = 1. Both headers are
// read before either payload; a gzip file is inflated twice (once to check it, once to convert it).
Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels);
// The same over two streams (files or buffers: the entry point for fuzz targets), rewound and read through;
// errors name the streams. `max_values` lowers the limit on pixels per file (a fuzz target's memory cap).
Dataset read_idx(ByteStream& images, ByteStream& labels, std::uint64_t max_values = kMaxSampleValues);

// CIFAR-10 binary batches (each record: 1 label byte + 3072 pixel bytes, CHW), concatenated in the order given.
// Every batch is sized first (a raw file by its size, a gzip one by inflating it, keeping nothing), at most
// kMaxCifarRecords records each, then the records are converted.
Dataset read_cifar10(const std::vector<std::filesystem::path>& batches);
// The same over streams (files or buffers: the entry point for fuzz targets), rewound and read through;
// `max_values` lowers the limit on pixels in all (and so on records per batch).
Dataset read_cifar10(std::vector<ByteStream>& batches, std::uint64_t max_values = kMaxSampleValues);

// Seeded synthetic classification set: `classes` Gaussian clusters in (c, h, w) space, separable enough that
// a linear model learns it; the same seed gives the same bytes. Values are not clipped to [0, 1] (see
// synthetic.cpp for the noise scale). InputError on a non-positive size, classes < 2, or more than
// kMaxSampleValues values in the samples (n*c*h*w) or in the class means (classes*c*h*w).
Dataset synthetic(std::uint64_t seed, int n, int c, int h, int w, int classes);
// synthetic()'s checks, and a set of its shape with no samples yet.
Dataset synthetic_shape(int n, int c, int h, int w, int classes);

// The indices of rank `rank`'s shard of n samples among `world` workers: a contiguous block after a seeded
// permutation shared by all ranks, so shards are disjoint and cover all of [0, n) (sizes differ by <= 1).
// The indices come in that permuted order. Asserts 0 <= rank < world.
std::vector<std::uint32_t> shard_indices(int n, int rank, int world, std::uint64_t seed);

// Endless minibatches over a shard: reshuffled every epoch from (seed, stream), the last partial batch
// dropped (as PyTorch's DataLoader with drop_last). Fills x (batch, c, h, w) and y (batch).
// `ds` must outlive the stream. Epoch e's order depends only on (the set of indices, seed, e); pass a
// rank-specific seed for per-rank orders. epoch() is 0 during the first pass. InputError if batch <= 0 or
// the shard is smaller than one batch; next() asserts its buffers' sizes.
class BatchStream {
 public:
  BatchStream(const Dataset& ds, std::vector<std::uint32_t> indices, int batch, std::uint64_t seed);
  void next(std::span<float> x, std::span<std::int32_t> y);
  int batch() const { return batch_; }
  std::int64_t epoch() const { return epoch_; }
  std::size_t steps_per_epoch() const { return indices_.size() / static_cast<std::size_t>(batch_); }
  // GossipGraD's ring shuffle (algorithms/gossipgrad.cpp). The sample indices next() will return, without
  // taking them (starting the next epoch first if next() would).
  std::vector<std::uint32_t> peek();
  // Overwrites the indices the last next() returned with `rows` (batch of them): the shard now holds those
  // samples instead, read from the next epoch on (this epoch has passed their positions).
  void replace_last(std::span<const std::uint32_t> rows);
  // The shard becomes `indices` (at least a batch of them) from the next epoch on.
  void reshard(std::vector<std::uint32_t> indices);

 private:
  void roll_epoch();  // starts the next epoch when fewer than `batch` samples remain
  void reshuffle();
  const Dataset* ds_;
  std::vector<std::uint32_t> indices_;
  std::vector<std::uint32_t> next_indices_;  // reshard()'s, taken at the next epoch; empty: none
  int batch_;
  std::uint64_t seed_;
  std::size_t pos_ = 0;
  std::int64_t epoch_ = 0;
};

}  // namespace dts::data
