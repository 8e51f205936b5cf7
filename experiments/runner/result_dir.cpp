// Result directories: the checks before a run, the partial directory and its owner marker, and the rename
// into place. What to notice: a partial directory is removed by a later run only when its marker names a
// process that no longer exists (same pid, same start time, same boot); a directory without our marker is
// never touched.
#include "experiments/runner/result_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

constexpr const char* kMarker = ".dtsim-partial";
constexpr std::size_t kMaxName = 200;  // leaves room for ".partial-PID" within NAME_MAX (255)

std::string read_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// A process as the kernel knows it: pid, start time (clock ticks since boot) and the boot's id. Empty start
// time: no such process, or one that has ended and waits to be reaped (a zombie writes nothing more; a point
// killed with its sweep stays one until init reaps it).
struct ProcessId {
  long pid = 0;
  std::string start, boot;
  bool operator==(const ProcessId&) const = default;
};

ProcessId process_id(long pid) {
  ProcessId id{pid, "", read_line("/proc/sys/kernel/random/boot_id")};
  const std::string stat = read_line("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return id;
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {  // field 3 is the state, 22 starttime (proc(5))
    if (i == 3 && (field == "Z" || field == "X")) return id;
    if (i == 22) id.start = field;
  }
  return id;
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

}  // namespace

void remove_stale_partials(const fs::path& out) {
  const std::string prefix = out.filename().string() + ".partial-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(out.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !all_digits(name.substr(prefix.size()))) continue;
    if (!entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    std::istringstream marker(read_line(entry.path() / kMarker));
    ProcessId owner;
    if (!(marker >> owner.pid >> owner.start >> owner.boot)) continue;  // not ours to judge
    if (std::to_string(owner.pid) != name.substr(prefix.size())) continue;
    if (process_id(owner.pid) == owner) continue;  // still running
    fs::remove_all(entry.path(), ec);
  }
}

std::string plain_name_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxName) return "is longer than " + std::to_string(kMaxName) + " characters";
  if (name[0] == '.') return "starts with '.'";
  for (const char c : name) {
    if (c == '/' || c == '\\') return "holds a path separator";
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "holds a control character";
  }
  return "";
}

bool holds_result(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_regular_file(dir / "summary.json", ec)) return true;
  int results = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec)) continue;  // a plot beside the variants
    if (!fs::is_regular_file(entry.path() / "summary.json", ec)) return false;
    ++results;
  }
  return !ec && results > 0;
}

OutDir check_out_dir(const std::string& out, const std::string& experiment, bool force) {
  const std::string key = out.empty() ? "--out (default results/" + experiment + ")" : "--out " + out;
  fs::path path = fs::absolute(out.empty() ? fs::path("results") / experiment : fs::path(out)).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();  // "a/b/" is "a/b"
  if (path == path.root_path() || !path.has_filename()) throw InputError(key, "is the root directory");
  if (path.filename().string().size() > kMaxName) {
    throw InputError(key, "its last name is longer than " + std::to_string(kMaxName) + " characters");
  }
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(path, ec);
  const fs::path cwd = fs::weakly_canonical(fs::current_path(), ec);
  const auto [at, end] = std::mismatch(real.begin(), real.end(), cwd.begin(), cwd.end());
  if (at == real.end()) throw InputError(key, "is the current directory or one that holds it");

  for (fs::path up = path.parent_path(); !up.empty(); up = up.parent_path()) {
    const auto status = fs::status(up, ec);
    if (fs::is_directory(status)) break;
    if (fs::exists(status)) throw InputError(key, up.string() + " is not a directory");
    if (up == up.root_path()) break;
  }
  const auto status = fs::symlink_status(path, ec);
  if (!fs::exists(status)) return {path, false};
  if (!fs::is_directory(fs::status(path, ec))) throw InputError(key, "exists and is not a directory");
  if (!force) {
    throw InputError(key,
                     "exists; dtsim replaces no directory it did not create in this run "
                     "(--force replaces a dtsim result directory)");
  }
  if (!holds_result(path)) {
    throw InputError(key, "exists and holds no dtsim result (no summary.json): not replaced, even with --force");
  }
  return {path, true};
}

fs::path shown(const fs::path& path) {
  std::error_code ec;
  const fs::path rel = path.lexically_relative(fs::current_path(ec));
  return !rel.empty() && *rel.begin() != ".." ? rel : path;
}

PartialDir::PartialDir(OutDir out) : out_(std::move(out)) {
  fs::create_directories(out_.path.parent_path());
  remove_stale_partials(out_.path);
  const long pid = static_cast<long>(getpid());
  partial_ = out_.path.string() + ".partial-" + std::to_string(pid);
  if (!fs::create_directory(partial_)) throw std::runtime_error(partial_.string() + " exists already");
  const ProcessId me = process_id(pid);
  std::ofstream(partial_ / kMarker) << me.pid << ' ' << me.start << ' ' << me.boot << '\n';
}

PartialDir::~PartialDir() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(partial_, ec);
}

void PartialDir::publish() {
  fs::remove(partial_ / kMarker);
  const bool exists = fs::exists(fs::symlink_status(out_.path));
  if (exists && !(out_.replace && holds_result(out_.path))) {
    throw std::runtime_error(out_.path.string() + " appeared while the run was going on; not replaced");
  }
  if (!exists) {
    fs::rename(partial_, out_.path);
    published_ = true;
    return;
  }
  // The old result moves aside, the new one takes its name, then the old one goes.
  const fs::path old = out_.path.string() + ".old-" + std::to_string(getpid());
  fs::rename(out_.path, old);
  std::error_code ec;
  fs::rename(partial_, out_.path, ec);
  if (ec) {
    fs::rename(old, out_.path);
    throw fs::filesystem_error("cannot publish the result", partial_, out_.path, ec);
  }
  published_ = true;
  fs::remove_all(old);
}

}  // namespace dts::exp
