#include "tests/fuzz/data_readers.hpp"

#include <algorithm>
#include <string>

#include "kernels/data/byte_stream.hpp"

namespace dts::fuzz {

data::Dataset read_idx_bytes(Bytes images, Bytes labels) {
  data::ByteStream img = data::ByteStream::over_memory(images, "images-idx3-ubyte");
  data::ByteStream lab = data::ByteStream::over_memory(labels, "labels-idx1-ubyte");
  return data::read_idx(img, lab, kMaxFuzzValues);
}

data::Dataset read_cifar10_bytes(const std::vector<Bytes>& batches) {
  std::vector<data::ByteStream> streams;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    streams.push_back(data::ByteStream::over_memory(batches[i], "data_batch_" + std::to_string(i + 1) + ".bin"));
  }
  return data::read_cifar10(streams, kMaxFuzzValues);
}

void check_dataset(const data::Dataset& ds) {
  check(ds.n > 0 && ds.c > 0 && ds.h > 0 && ds.w > 0, "a data set has positive n, c, h, w");
  check(ds.classes >= 2, "a data set has at least two classes");
  check(ds.x.size() == static_cast<std::size_t>(ds.n) * ds.sample_size(), "x holds n samples of c*h*w floats");
  check(ds.y.size() == static_cast<std::size_t>(ds.n), "y holds n labels");
  check(std::all_of(ds.x.begin(), ds.x.end(), [](float v) { return v >= 0.0f && v <= 1.0f; }),
        "pixels are scaled to [0, 1]");
  check(std::all_of(ds.y.begin(), ds.y.end(), [&](std::int32_t l) { return l >= 0 && l < ds.classes; }),
        "labels are in [0, classes)");
}

}  // namespace dts::fuzz
