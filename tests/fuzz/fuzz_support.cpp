#include "tests/fuzz/fuzz_support.hpp"

#include <cxxabi.h>
#include <stdlib.h>  // mkdtemp

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <typeinfo>

#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace dts::fuzz {
namespace {

void remove_scratch() {
  std::error_code ec;
  fs::remove_all(scratch_dir(), ec);
}

std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && name ? name.get() : t.name();
}

}  // namespace

const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "dts_fuzz_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("dts fuzz: mkdtemp");
      std::abort();
    }
    std::atexit(remove_scratch);
    return fs::path(tmpl);
  }();
  return dir;
}

fs::path write_scratch(const std::string& name, Bytes bytes) {
  const fs::path path = scratch_dir() / name;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  check(out.good(), "writing a scratch file");
  return path;
}

fs::path write_scratch(const std::string& name, std::string_view text) {
  return write_scratch(name, Bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

void copy_repo_platforms() {
  const fs::path to = scratch_dir() / "platforms";
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(fs::path(DTS_SOURCE_DIR) / "platforms")) {
    if (e.path().extension() == ".json") fs::copy_file(e.path(), to / e.path().filename());
  }
}

void expect_input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {  // bad input, reported as dtsim reports it: the expected outcome
    static const bool verbose = std::getenv("DTS_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "input error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dts fuzz: %s escaped, not an InputError: %s\n", type_name(typeid(e)).c_str(), e.what());
    std::abort();
  }
}

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "dts fuzz: invariant broken: %s\n", what);
  std::abort();
}

}  // namespace dts::fuzz
