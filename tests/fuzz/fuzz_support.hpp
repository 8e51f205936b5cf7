// Shared by the fuzz targets (README "Checks"): a scratch directory per fuzzing process, files
// written into it, and the rule every target checks: bad input ends in dts::InputError (dtsim's exit 2); any
// other exception, an abort or a sanitizer report is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace dts::fuzz {

using Bytes = std::span<const std::uint8_t>;

// An empty directory of this process's own, made on first use, removed at exit.
const std::filesystem::path& scratch_dir();

// Writes `bytes` to scratch_dir() / name (creating its parent directories) and returns the path.
std::filesystem::path write_scratch(const std::string& name, Bytes bytes);
std::filesystem::path write_scratch(const std::string& name, std::string_view text);

// Copies the repository's platforms/*.json (the catalogs and the shipped platforms) into scratch_dir() /
// "platforms", so that the names seed files use resolve as in the repository.
void copy_repo_platforms();

// Runs `fn`. Returns when it returns or throws dts::InputError (printed when DTS_FUZZ_VERBOSE is set); prints
// any other exception and aborts, so that libFuzzer records the input.
void expect_input_error(const std::function<void()>& fn);

// Aborts with `what` unless `ok`: an invariant of a reader's result that the input broke.
void check(bool ok, const char* what);

}  // namespace dts::fuzz
