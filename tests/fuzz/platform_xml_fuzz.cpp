// Fuzz target: raw SimGrid XML platforms (topology "xml"), through the check dtsim makes before a run
// (sim::check_platform, sim/preflight.cpp): SimGrid loads the file in a child process, builds it, seals it
// and sends one message between two ranks' hosts, and whatever SimGrid refuses, aborts included, becomes an
// InputError. A finding: another exception here, or a crash file that the child wrote (child_guard.cpp: a
// sanitizer report, a hang, a load past 2 GiB). Coverage comes from our code only (SimGrid is not
// instrumented), so this target mutates its seeds mostly blind; each input costs a fork and a SimGrid engine.
#include "sim/preflight.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  dts::sim::PlatformSpec spec;
  spec.name = "fuzz";
  spec.topology = "xml";
  spec.xml_file = dts::fuzz::write_scratch("platform.xml", dts::fuzz::Bytes(data, size)).string();
  spec.origin = "fuzz_platform.json:/platform";
  dts::fuzz::expect_input_error([&] { dts::sim::check_platform(spec, 2, 2, {}); });
  return 0;
}
