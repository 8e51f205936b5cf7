// Input errors end to end, through the dtsim binary: whatever a file or an argument holds, dtsim exits 2 with a
// message naming the file and the key (or the argument), before anything runs, and `run --check` catches what
// a run would reject. JSON-level errors here; the SimGrid side (simgrid_config, --cfg, XML) in
// simgrid_input_test.cpp.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {

nlohmann::json plain_experiment() {
  auto e = tiny_experiment();
  e.erase("variants");
  return e;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']');
}

// `e` as JSON text with `value` (any text) at the top-level key `key`.
std::string with_raw_value(nlohmann::json e, const std::string& key, const std::string& value) {
  e[key] = "@@";
  std::string text = e.dump();
  text.replace(text.find("\"@@\""), 4, value);
  return text;
}

dts::test::CliResult check(const TempDir& tmp, const std::string& args) {
  return run_dtsim("run " + args + " --check", tmp / "");
}

}  // namespace

TEST_CASE("dtsim run: JSON nested deeper than 64 levels is an input error, not a stack overflow", "[golden]") {
  TempDir tmp;
  const std::string deep = nested_arrays(65000);
  const auto nesting = Contains("nesting deeper than 64 levels");

  write_text(tmp / "deep.json", with_raw_value(plain_experiment(), "description", deep));
  auto r = check(tmp, (tmp / "deep.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("deep.json:/description/0/0") && nesting);

  // In a variant (merged over the base: copied and merged recursively).
  auto e = tiny_experiment();
  e["variants"][0]["@@"] = "@@";
  std::string text = e.dump();
  text.replace(text.find("\"@@\":\"@@\""), 9, "\"run\": {\"x\": " + deep + "}");
  write_text(tmp / "deep_variant.json", text);
  r = check(tmp, (tmp / "deep_variant.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("deep_variant.json:/variants/0/run/x/0") && nesting);

  // In a platform file.
  write_text(tmp / "deep_platform.json", with_raw_value(plain_experiment()["platform"], "name", deep));
  e = plain_experiment();
  e["platform"] = "deep_platform.json";
  write_json(tmp / "uses_deep_platform.json", e);
  r = check(tmp, (tmp / "uses_deep_platform.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("deep_platform.json:/name/0") && nesting);

  // In a --set value, and a --set path: together they stay within 64 levels (the root object is one).
  write_json(tmp / "tiny.json", plain_experiment());
  r = check(tmp, (tmp / "tiny.json").string() + " --set 'description=" + nested_arrays(63) + "'");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("tiny.json:/description: expected a string"));
  r = check(tmp, (tmp / "tiny.json").string() + " --set 'description=" + nested_arrays(64) + "'");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("--set description=[[[[") && nesting);
  std::string path = "run";
  for (int i = 0; i < 70; ++i) path += ".x";
  r = check(tmp, (tmp / "tiny.json").string() + " --set " + path + "=1");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, nesting);
}

TEST_CASE("dtsim run: a number beyond a double and 2^64-1 are input errors that print the number", "[golden]") {
  TempDir tmp;
  write_text(tmp / "huge.json", with_raw_value(plain_experiment(), "seed", "1e400"));
  auto r = check(tmp, (tmp / "huge.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("huge.json:/seed") && Contains("1e400"));

  write_text(tmp / "huge_platform.json", with_raw_value(plain_experiment()["platform"], "link_latency_s", "-1e999"));
  auto e = plain_experiment();
  e["platform"] = "huge_platform.json";
  write_json(tmp / "uses_huge_platform.json", e);
  r = check(tmp, (tmp / "uses_huge_platform.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("huge_platform.json:/link_latency_s") && Contains("-1e999"));

  write_text(tmp / "u64.json", with_raw_value(plain_experiment(), "seed", "18446744073709551615"));
  r = check(tmp, (tmp / "u64.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("u64.json:/seed") && Contains("value 18446744073709551615 out of range"));
}

TEST_CASE("dtsim run: a directory given as the experiment or a platform file is an input error", "[golden]") {
  TempDir tmp;
  fs::create_directories(tmp / "a_dir");
  auto r = check(tmp, (tmp / "a_dir").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("a_dir") && Contains("a directory"));

  auto e = plain_experiment();
  e["platform"] = "a_dir";
  write_json(tmp / "platform_dir.json", e);
  r = check(tmp, (tmp / "platform_dir.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("platform_dir.json:/platform") && Contains("a directory"));

  e["platform"] = {{"base", "a_dir"}};
  write_json(tmp / "base_dir.json", e);
  r = check(tmp, (tmp / "base_dir.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("base_dir.json:/platform/base") && Contains("a directory"));
}

TEST_CASE("dtsim run: a FIFO or a device as the experiment or platform file is refused unopened", "[golden]") {
  TempDir tmp;
  REQUIRE(mkfifo((tmp / "fifo.json").c_str(), 0600) == 0);
  // A FIFO opened for reading blocks until a writer comes: `timeout` turns a hang into exit 124.
  auto r = run_dtsim("run " + (tmp / "fifo.json").string() + " --check", tmp / "", "timeout -s KILL 20 ");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("fifo.json") && Contains("not a regular file"));
  auto e = plain_experiment();
  e["platform"] = "/dev/zero";
  write_json(tmp / "zero.json", e);
  r = run_dtsim("run " + (tmp / "zero.json").string() + " --check", tmp / "", "timeout -s KILL 20 ");
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("zero.json:/platform") && Contains("not a regular file"));
}

TEST_CASE("dtsim run: platform files that name each other as base are an input error naming the cycle", "[golden]") {
  TempDir tmp;
  auto e = plain_experiment();
  const nlohmann::json platform = e["platform"];

  write_json(tmp / "a.json", {{"base", "b.json"}});
  write_json(tmp / "b.json", {{"base", "a.json"}, {"hosts", 4}});
  e["platform"] = "a.json";
  write_json(tmp / "cycle.json", e);
  auto r = check(tmp, (tmp / "cycle.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("/base") && Contains("in a cycle") && Contains("a.json -> ") && Contains("b.json -> "));

  write_json(tmp / "self.json", {{"base", "self.json"}});
  e["platform"] = {{"base", "self.json"}};  // inline, over a file that names itself
  write_json(tmp / "self_cycle.json", e);
  r = check(tmp, (tmp / "self_cycle.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("self_cycle.json") && Contains("in a cycle") && Contains("self.json"));

  // A long chain ends in a real platform, yet is refused past 16 files; a short one is read.
  const auto chained = [](int i) {
    std::string name = "p";  // (built in steps: GCC 12 warns falsely on "p" + std::to_string(i))
    name += std::to_string(i);
    name += ".json";
    return name;
  };
  write_json(tmp / chained(20), platform);
  for (int i = 0; i < 20; ++i) write_json(tmp / chained(i), {{"base", chained(i + 1)}});
  e["platform"] = "p0.json";
  write_json(tmp / "long_chain.json", e);
  r = check(tmp, (tmp / "long_chain.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("more than 16 platform files chained by base"));
  e["platform"] = "p17.json";
  write_json(tmp / "short_chain.json", e);
  r = check(tmp, (tmp / "short_chain.json").string());
  INFO(r.err);
  REQUIRE(r.code == 0);
}

TEST_CASE("dtsim run: messages cut long values and say ranges plainly", "[golden]") {
  TempDir tmp;
  auto e = plain_experiment();
  e["algorithm"]["name"] = std::string(5000, 'y');
  e["run"][std::string(5000, 'k')] = 1;
  write_json(tmp / "long.json", e);
  auto r = check(tmp, (tmp / "long.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("long.json:/algorithm/name") && Contains("yyy...\""));
  REQUIRE(r.err.size() < 600);
  e["algorithm"]["name"] = "allreduce_sgd";
  write_json(tmp / "long_key.json", e);
  r = check(tmp, (tmp / "long_key.json").string());
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, Contains("long_key.json:/run/kkk") && Contains("unknown key"));
  REQUIRE(r.err.size() < 300);

  write_json(tmp / "tiny.json", plain_experiment());
  for (const char* bad : {"-1", "0", "nan", "inf", "1e400"}) {
    r = check(tmp, (tmp / "tiny.json").string() + " --hang-timeout " + bad);
    INFO(bad << ": " << r.err);
    REQUIRE(r.code == 2);
    REQUIRE_THAT(r.err, Contains("--hang-timeout") && Contains("(0, 1e7]"));
    REQUIRE_THAT(r.err, !Contains("1797693"));
  }
  r = check(tmp, (tmp / "tiny.json").string() + " --hang-timeout 30");
  REQUIRE(r.code == 0);
}
