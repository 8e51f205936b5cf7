// How dtsim meets a raw SimGrid XML platform (topology "xml") today: the run's child process creates the
// engine and sim::build_platform hands the file to SimGrid's parser (Engine::load_platform), then places the
// ranks on its hosts. SimGrid allows one platform per engine and one engine per process, and its parser
// aborts the process on some bad files (xbt_die), so each load here runs in a fork of its own, as each run
// of dtsim does; dtsim is to check XML files the same way before a run (issue 13), reporting a load that
// dies as bad input. When it does, platform_xml_fuzz.cpp calls that check instead.
#pragma once

#include <filesystem>
#include <string>

namespace dts::fuzz {

struct XmlLoad {
  enum class Outcome {
    kLoaded,          // a platform with hosts
    kInputError,      // dts::InputError: what dtsim reports as bad input (exit 2)
    kOtherError,      // another exception (SimGrid's ParseError...): dtsim's "error:" (exit 1)
    kAborted,         // SIGABRT: SimGrid gave up on the file (xbt_die), a run dies of it
    kSanitizerError,  // an ASan or UBSan report (a segfault included)
    kHung,            // still loading after the timeout
    kUnknown,         // another signal or exit code
  };
  Outcome outcome = Outcome::kUnknown;
  int status = 0;      // waitpid's status
  std::string output;  // the child's stderr
};

// Creates the process's SimGrid engine, once, with no platform: each child starts from a copy of it, which
// saves the engine's start-up on every load.
void make_engine();

// Loads `xml` as dtsim loads a topology "xml" platform for one rank, in a child process (a fork of this one,
// after make_engine()) that gets `timeout_s` seconds.
XmlLoad load_platform_xml_isolated(const std::filesystem::path& xml, unsigned timeout_s);

}  // namespace dts::fuzz
