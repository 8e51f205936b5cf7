// The data set readers under fuzzing, fed bytes. Today's readers (kernels/data) take file paths and read
// whole files; these adapters write the bytes to scratch files and call them. A reader that later takes a
// stream, or a size bound, changes here and nowhere else in tests/fuzz.
#pragma once

#include <vector>

#include "kernels/data/dataset.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace dts::fuzz {

// data::read_idx on an images file and a labels file with these contents.
data::Dataset read_idx_bytes(Bytes images, Bytes labels);

// data::read_cifar10 on batch files with these contents, in this order.
data::Dataset read_cifar10_bytes(const std::vector<Bytes>& batches);

// What every data set a reader returns must satisfy (dataset.hpp): positive sizes, n samples of c*h*w floats
// in [0, 1], n labels in [0, classes). Aborts naming the broken one.
void check_dataset(const data::Dataset& ds);

}  // namespace dts::fuzz
