// Fuzz target: platform files (sim/platform.cpp, through sim::load_platform_file as dtsim reads them). Input: a
// platform file, written next to copies of the repository's platforms/*.json, so that catalogs
// (devices.json, links.json) and "base" platforms resolve as in the repository.
#include "sim/platform.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dts::fuzz::copy_repo_platforms();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = dts::fuzz::write_scratch("platforms/fuzz_platform.json", dts::fuzz::Bytes(data, size));
  dts::fuzz::expect_input_error([&] {
    const dts::sim::PlatformSpec spec = dts::sim::load_platform_file(path.string());
    // The partition check runs on every plan (experiment.cpp), with the model's and data set's sizes.
    dts::sim::check_partition_capacity(spec, 4e6, 4e6);
  });
  return 0;
}
