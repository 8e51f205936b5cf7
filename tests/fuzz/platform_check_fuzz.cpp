// Fuzz target: platform files as dtsim reads them (platform_json_fuzz.cpp) and then checks them before a run
// (sim::check_platform, sim/preflight.cpp): the platform built by our code (sim/platform_build.cpp) and SimGrid
// in a child process, for an EASGD-like job of 3 ranks, 2 of them workers. Findings as in
// platform_xml_fuzz.cpp. Slower than platform_json (a fork and a SimGrid engine per input): its seeds are
// platform_json's.
#include "sim/platform.hpp"
#include "sim/preflight.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dts::fuzz::copy_repo_platforms();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = dts::fuzz::write_scratch("platforms/fuzz_platform.json", dts::fuzz::Bytes(data, size));
  dts::fuzz::expect_input_error([&] {
    const dts::sim::PlatformSpec spec = dts::sim::load_platform_file(path.string());
    dts::sim::check_platform(spec, 3, 2, {});
  });
  return 0;
}
