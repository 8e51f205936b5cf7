// The data set readers under fuzzing, fed bytes: kernels/data's entry points over streams in memory
// (ByteStream::over_memory), the same parsing as over files, with a cap on sample values so that a header's
// honest promise of a large set cannot take the fuzzer's memory.
#pragma once

#include <vector>

#include "kernels/data/dataset.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace dts::fuzz {

// The most sample values a fuzzed file may hold: 2^22, 16 MiB as floats. Only a gzip input can promise
// more (16 KiB inflate to 16.5 MB at deflate's 1032:1); the readers must refuse it as they refuse a file
// beyond kMaxSampleValues.
inline constexpr std::uint64_t kMaxFuzzValues = std::uint64_t{1} << 22;

// data::read_idx on an images file and a labels file with these contents.
data::Dataset read_idx_bytes(Bytes images, Bytes labels);

// data::read_cifar10 on batch files with these contents, in this order.
data::Dataset read_cifar10_bytes(const std::vector<Bytes>& batches);

// What every data set a reader returns must satisfy (dataset.hpp): positive sizes, n samples of c*h*w floats
// in [0, 1], n labels in [0, classes). Aborts naming the broken one.
void check_dataset(const data::Dataset& ds);

}  // namespace dts::fuzz
