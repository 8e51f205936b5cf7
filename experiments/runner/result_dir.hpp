// Where a run's results go, and the rules that keep a user's files safe: dtsim replaces nothing it did not
// create. An existing --out is refused (an input error, before anything runs) unless --force, and even then
// only a directory that holds a dtsim result is replaced. Results are written into DIR.partial-PID, which
// carries a marker naming the process that owns it, and renamed into place once complete; a run killed
// with SIGKILL leaves its partial directory behind, and the next run with the same --out removes it once
// the marker proves its owner is gone. Used by both backends (run.cpp, run_mpi.cpp).
#pragma once

#include <filesystem>
#include <string>

namespace dts::exp {

// Empty when `name` can be a directory name of its own (an experiment or variant name), else why not.
std::string plain_name_problem(const std::string& name);

// True when `dir` holds a dtsim result: its summary.json, or (an experiment with variants) at least one
// subdirectory and a summary.json in each.
bool holds_result(const std::filesystem::path& dir);

struct OutDir {
  std::filesystem::path path;  // absolute and normal, with a file name of its own
  bool replace = false;        // it exists and holds a result that --force allows to replace
};

// Checks where a run will write: `out` (--out, or "" for results/<experiment>) and --force. Throws
// InputError naming --out for an existing directory (without --force, or one that holds no result), the
// current directory or one of its ancestors, and a path through a file.
OutDir check_out_dir(const std::string& out, const std::string& experiment, bool force);

// Removes the DIR.partial-PID directories of `out` whose marker names a process that is gone (a run killed with
// SIGKILL). A process killed a moment ago may still be dying: callers that run long after may call it again.
void remove_stale_partials(const std::filesystem::path& out);

// `path` as the user would write it: relative to the current directory when inside it, else absolute.
std::filesystem::path shown(const std::filesystem::path& path);

// DIR.partial-PID of a checked OutDir: created (after removing the stale ones of dead owners) by the
// constructor, removed by the destructor unless published.
class PartialDir {
 public:
  explicit PartialDir(OutDir out);
  ~PartialDir();
  PartialDir(const PartialDir&) = delete;
  PartialDir& operator=(const PartialDir&) = delete;

  const std::filesystem::path& path() const { return partial_; }
  // Renames the partial directory to the result directory (replacing the old result if allowed).
  void publish();

 private:
  OutDir out_;
  std::filesystem::path partial_;
  bool published_ = false;
};

}  // namespace dts::exp
