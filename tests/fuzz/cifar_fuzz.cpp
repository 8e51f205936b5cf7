// Fuzz target: the CIFAR-10 reader (kernels/data/cifar.cpp and file_bytes.cpp, raw or gzip). Input: one byte
// b, then the contents of 1 + b % 3 batch files, cut into that many equal parts (the last takes the rest).
#include <vector>

#include "tests/fuzz/data_readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return -1;
  const std::size_t files = 1 + data[0] % 3, body = size - 1, part = body / files;
  std::vector<dts::fuzz::Bytes> batches;
  for (std::size_t i = 0; i < files; ++i) {
    const std::size_t len = i + 1 == files ? body - i * part : part;
    batches.emplace_back(data + 1 + i * part, len);
  }
  dts::fuzz::expect_input_error([&] { dts::fuzz::check_dataset(dts::fuzz::read_cifar10_bytes(batches)); });
  return 0;
}
