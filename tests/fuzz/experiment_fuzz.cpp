// Fuzz target: experiment files with --set overrides, read as `dtsim run FILE --set ... --check` reads them
// (experiments/runner/experiment.cpp: load_experiment, apply_set, read_experiment). Nothing runs.
// Input: the experiment file, then optionally a NUL byte and the --set assignments, NUL-separated.
// The file sits in scratch/experiments/fuzz/, next to scratch/platforms/ (copies of the repository's), so a
// seed's "../../platforms/x.json" resolves; data paths resolve to nothing. Data set files are never read:
// this target links with --wrap=open, and the wrapper below refuses every open() of our code, whose only one
// is a data file's (kernels/data/byte_stream.cpp; JSON files are read through libstdc++), so that a data
// section naming /usr/share/datasets/... costs an InputError, not a 30 MB read. The readers have targets of
// their own. Synthetic data sets (--wrap of data::synthetic) get synthetic()'s checks and shape, labels in
// round robin and zero values: drawing the Gaussian clusters is arithmetic, not reading, and took 89 % of
// this target's time (perf, 2026-11-27; 60 inputs/s).
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"
#include "experiments/runner/experiment.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "kernels/data/dataset.hpp"
#include "tests/fuzz/fuzz_support.hpp"

extern "C" int __wrap_open(const char*, int, ...) {
  errno = EACCES;
  return -1;
}

constexpr std::uint64_t kMaxSyntheticValues = std::uint64_t{1} << 26;  // 256 MB of floats

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wreturn-type-c-linkage"  // the wrapped symbol is C++: same ABI
extern "C" dts::data::Dataset __wrap__ZN3dts4data9syntheticEmiiiii(std::uint64_t, int n, int c, int h, int w,
                                                                   int classes) {
  dts::data::Dataset ds = dts::data::synthetic_shape(n, c, h, w, classes);
  // A memory cap of this target, as the reader targets' (an input of 1.76 GB of samples is valid, and with its
  // split it passed libFuzzer's 2 GB limit): what synthetic() would hold beyond it is refused like its own limit.
  if (static_cast<std::uint64_t>(n) * ds.sample_size() > kMaxSyntheticValues) {
    throw dts::InputError("", "synthetic data set: more values than the fuzz target's cap");
  }
  ds.x.resize(static_cast<std::size_t>(n) * ds.sample_size());
  ds.y.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ds.y[static_cast<std::size_t>(i)] = i % classes;
  return ds;
}
#pragma clang diagnostic pop

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  dts::fuzz::copy_repo_platforms();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t end = input.find('\0');
  std::vector<std::string> sets;
  for (std::size_t at = end; at != std::string_view::npos && at < input.size();) {
    const std::size_t next = input.find('\0', at + 1);
    sets.emplace_back(input.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1));
    at = next;
  }
  const auto path = dts::fuzz::write_scratch("experiments/fuzz/experiment.json", input.substr(0, end));
  dts::fuzz::expect_input_error([&] { dts::exp::load_experiment(path.string(), sets, dts::exp::sim_reader()); });
  return 0;
}
