// Fuzz target: the IDX reader (kernels/data/idx.cpp and file_bytes.cpp, raw or gzip). Input: a 2-byte
// big-endian length L, then the images file (L bytes, fewer if the input is shorter), then the labels file.
#include <algorithm>

#include "tests/fuzz/data_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return -1;  // not an input of this format: kept out of the corpus
  const std::size_t split = std::min<std::size_t>((std::size_t{data[0]} << 8) | data[1], size - 2);
  const dts::fuzz::Bytes images(data + 2, split), labels(data + 2 + split, size - 2 - split);
  dts::fuzz::expect_input_error([&] { dts::fuzz::check_dataset(dts::fuzz::read_idx_bytes(images, labels)); });
  return 0;
}
