// Bad data files through the dtsim binary: every one is an input error (exit 2) naming the experiment file,
// the key and the data file, found by `--check` as by a run, before anything is written; and the hostile ones
// (a gzip bomb, a header promising billions of samples, /dev/zero, a FIFO, a synthetic set too large to
// allocate) are refused at once, in little memory. dtsim runs with its address space capped at 2 GiB and is
// killed after 20 s, so a reader that reads such files whole fails here instead of taking the machine.
// Under a sanitizer (scripts/sanitize) the shadow memory needs terabytes of address space, so there is no cap,
// and the time and memory bounds grow by what the sanitizer itself costs.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using namespace dts::data::testing;
using dts::test::slurp;
using dts::test::write_json;

namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DTS_SANITIZED 1
#endif
#endif
#ifdef DTS_SANITIZED
constexpr bool kCapAddressSpace = false;
constexpr double kAtOnceS = 10.0;        // a sanitized dtsim starts in about 1 s on this machine
constexpr long kLittleKiB = 400 * 1024;  // ASan's quarantine (64 MiB) and shadow pages
#else
constexpr bool kCapAddressSpace = true;
constexpr double kAtOnceS = 2.0;
constexpr long kLittleKiB = 100 * 1024;
#endif

struct Measured {
  int code = -1;         // the exit code; -1 when killed or signalled
  double wall_s = 0;     // from fork to exit
  long max_rss_kib = 0;  // wait4's peak resident set: dtsim's, or this test's at fork time if larger (small)
  std::string err;
};

// Runs dtsim with `args` (no shell), stdout and stderr to files in `dir`; SIGKILL after `kill_after_s`.
Measured run_measured(const std::vector<std::string>& args, const fs::path& dir, double kill_after_s = 20) {
  std::vector<std::string> argv_s = {DTSIM_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const rlimit cap{std::size_t{2} << 30, std::size_t{2} << 30};
    if (kCapAddressSpace) setrlimit(RLIMIT_AS, &cap);
    dup2(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    dup2(open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Measured m;
  int status = 0;
  rusage usage{};
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (elapsed() > kill_after_s) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  m.wall_s = elapsed();
  m.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  m.max_rss_kib = usage.ru_maxrss;
  m.err = slurp(dir / "stderr.txt");
  return m;
}

// `dtsim run EXP --check` and `dtsim run EXP --out OUT` with `data` as the data section: both must be the
// same input error, containing every string of `expect`, with nothing written. Returns the --check run.
Measured expect_input_error(const TempDir& tmp, const nlohmann::json& data, const std::vector<std::string>& expect) {
  auto exp = dts::test::tiny_experiment();
  exp.erase("variants");
  exp["data"] = data;
  write_json(tmp / "exp.json", exp);
  const std::string file = (tmp / "exp.json").string();
  const Measured check = run_measured({"run", file, "--check"}, tmp / "");
  const Measured run = run_measured({"run", file, "--out", (tmp / "out").string()}, tmp / "");
  for (const Measured* m : {&check, &run}) {
    INFO(m->err);
    REQUIRE(m->code == 2);
    REQUIRE_THAT(m->err, Catch::StartsWith("input error: " + file + ":/data/"));
    for (const auto& e : expect) REQUIRE_THAT(m->err, Catch::Contains(e));
  }
  REQUIRE(!fs::exists(tmp / "out"));
  return check;
}

// An IDX data section over files in `tmp`, written here unless they exist: train 64 images of 8 x 8, test 32.
nlohmann::json idx_data(const TempDir& tmp) {
  if (!fs::exists(tmp / "train-images")) {
    write_file(tmp / "train-images", idx3(64, 8, 8, pattern(64 * 64)));
    write_file(tmp / "train-labels", idx1(pattern(64, 1, 0)));  // 0..63: 64 classes
    write_file(tmp / "test-images", idx3(32, 8, 8, pattern(32 * 64)));
    write_file(tmp / "test-labels", idx1(pattern(32, 1, 0)));
  }
  return {{"name", "idx"},
          {"train_images", (tmp / "train-images").string()},
          {"train_labels", (tmp / "train-labels").string()},
          {"test_images", (tmp / "test-images").string()},
          {"test_labels", (tmp / "test-labels").string()}};
}

}  // namespace

TEST_CASE("dtsim run --check: train and test of different sample shapes or classes are input errors", "[golden]") {
  TempDir tmp;
  auto data = idx_data(tmp);
  {
    auto exp = dts::test::tiny_experiment();
    exp.erase("variants");
    exp["data"] = data;
    write_json(tmp / "good.json", exp);
    const Measured good = run_measured({"run", (tmp / "good.json").string(), "--check"}, tmp / "");
    INFO(good.err);
    REQUIRE(good.code == 0);
  }
  // Test images of 4 x 4 where the training images are 8 x 8.
  write_file(tmp / "small-images", idx3(32, 4, 4, pattern(32 * 16)));
  data["test_images"] = (tmp / "small-images").string();
  expect_input_error(tmp, data, {"/data/test_images", "small-images", "(1, 4, 4)", "(1, 8, 8)"});

  // Test labels up to 69 where the training labels stop at 63: 70 classes against the model's 64.
  data = idx_data(tmp);
  write_file(tmp / "more-labels", idx1(pattern(32, 2, 7)));  // 7, 9, .., 69
  data["test_labels"] = (tmp / "more-labels").string();
  expect_input_error(tmp, data, {"/data/test_labels", "more-labels", "70 classes", "64"});
}

TEST_CASE("dtsim run --check: a gzip bomb or a header promising billions is refused at once", "[golden]") {
  /* In details:
   *   o bomb.gz: a valid header and 64 images of 8 x 8, then 4 GiB of zeros (a 4 MB file)
   *   o huge.gz: a header promising 2^31 - 1 images of 28 x 28 (1.7 TB), then 1 GiB of zeros
   * Expectations
   *   o both input errors naming the file under /data/train_images, within 2 s and 100 MiB (the figures
   *     are about 0.2 s and 40 MiB; reading the bomb whole took 171 s and 4.2 GB)
   */
  TempDir tmp;
  auto data = idx_data(tmp);
  write_gzip_bomb(tmp / "bomb.gz", idx3(64, 8, 8, pattern(64 * 64)), 4096);
  write_gzip_bomb(tmp / "huge.gz", idx3(0x7fffffff, 28, 28, {}), 1024);
  for (const auto& [file, message] :
       {std::pair<const char*, const char*>{"bomb.gz", "bytes after the 4112"}, {"huge.gz", "more than the limit"}}) {
    data["train_images"] = (tmp / file).string();
    const Measured m = expect_input_error(tmp, data, {"/data/train_images", file, message});
    INFO(file << ": " << m.wall_s << " s, " << m.max_rss_kib << " KiB");
    CHECK(m.wall_s < kAtOnceS);
    CHECK(m.max_rss_kib < kLittleKiB);
  }
}

TEST_CASE("dtsim run --check: /dev/zero, a FIFO or a directory as a data file is refused at once", "[golden]") {
  TempDir tmp;
  auto data = idx_data(tmp);
  REQUIRE(mkfifo((tmp / "fifo").c_str(), 0600) == 0);
  for (const auto& [file, message] : {std::pair<std::string, const char*>{"/dev/zero", "is a character device"},
                                      {(tmp / "fifo").string(), "is a FIFO"},
                                      {(tmp / "").string(), "is a directory"}}) {
    data["test_labels"] = file;
    const Measured m = expect_input_error(tmp, data, {"/data/test_labels", file, message});
    INFO(file << ": " << m.wall_s << " s, " << m.max_rss_kib << " KiB");
    CHECK(m.wall_s < kAtOnceS);
    CHECK(m.max_rss_kib < kLittleKiB);
  }
}

TEST_CASE("dtsim run --check: CIFAR-10 batches, /dev/zero or a gzip bomb, are refused", "[golden]") {
  TempDir tmp;
  fs::create_directory(tmp / "cifar");
  for (int i = 2; i <= 5; ++i) write_file(tmp / "cifar" / ("data_batch_" + std::to_string(i) + ".bin"), {});
  fs::create_symlink("/dev/zero", tmp / "cifar" / "data_batch_1.bin");
  const nlohmann::json data = {{"name", "cifar10"}, {"dir", (tmp / "cifar").string()}};
  expect_input_error(tmp, data, {"/data/dir", "data_batch_1.bin", "is a character device"});

  // 4 GiB of gzip zeros: valid records (label 0, black pixels), refused at 60000 of them.
  fs::remove(tmp / "cifar" / "data_batch_1.bin");
  write_gzip_bomb(tmp / "cifar" / "data_batch_1.bin", {}, 4096);
  const Measured m = expect_input_error(tmp, data, {"/data/dir", "data_batch_1.bin", "more than 60000 records"});
  INFO(m.wall_s << " s, " << m.max_rss_kib << " KiB");
  CHECK(m.wall_s < 2.5 * kAtOnceS);  // 184 MB inflated into a small buffer: about 0.7 s on the 2-core VM
  CHECK(m.max_rss_kib < kLittleKiB);
}

TEST_CASE("dtsim run --check: a synthetic set too large to allocate is an input error naming the key", "[golden]") {
  TempDir tmp;
  nlohmann::json data = {{"name", "synthetic"}, {"train_samples", 10'000'000}, {"height", 64}, {"width", 64}};
  expect_input_error(tmp, data, {"/data/train_samples", "more than the limit of 1073741824"});
  data = {{"name", "synthetic"}, {"classes", 100'000}, {"height", 128}, {"width", 128}};
  expect_input_error(tmp, data, {"/data/classes", "class means"});
}
