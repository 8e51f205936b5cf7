// Fuzz target: raw SimGrid XML platforms, loaded as dtsim loads them (xml_platform.hpp: SimGrid's parser in a
// forked child, as a run does). A finding is a sanitizer report (in our code, or a segfault in SimGrid's), a
// load that hangs, or a child that ends in a way we do not know. A rejected file is not: an exception
// (dtsim's exit 2 or 1), or SimGrid aborting on it (xbt_die), which a run reports as "the run died" and the
// check that dtsim is to make before a run as bad input. Coverage comes from our code only (SimGrid is not
// instrumented), so this target mutates its seeds mostly blind.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/xml_platform.hpp"

namespace {
constexpr unsigned kChildSeconds = 25;  // below scripts/fuzz's -timeout=30, so that the child's report wins
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dts::fuzz::make_engine();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using Outcome = dts::fuzz::XmlLoad::Outcome;
  const auto path = dts::fuzz::write_scratch("platform.xml", dts::fuzz::Bytes(data, size));
  const dts::fuzz::XmlLoad r = dts::fuzz::load_platform_xml_isolated(path, kChildSeconds);
  if (r.outcome == Outcome::kSanitizerError || r.outcome == Outcome::kHung || r.outcome == Outcome::kUnknown) {
    std::fprintf(stderr, "%s\ndts fuzz: loading the platform %s (wait status 0x%x)\n", r.output.c_str(),
                 r.outcome == Outcome::kSanitizerError ? "made a sanitizer report"
                 : r.outcome == Outcome::kHung         ? "hung"
                                                       : "ended its process in an unknown way",
                 static_cast<unsigned>(r.status));
    std::abort();
  }
  return 0;
}
