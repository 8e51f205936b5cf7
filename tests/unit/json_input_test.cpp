// Bounded JSON input (core/json_input.hpp) and the ConfigReader messages built on it: the nesting
// limit at its edge, numbers beyond a double, the JSON path in messages, and echoed values cut short.
#include <catch2/catch.hpp>

#include "core/config_reader.hpp"

using Catch::Contains;
using dts::ConfigError;
using dts::kMaxJsonDepth;

namespace {

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(static_cast<std::size_t>(depth), '[') + inner + std::string(static_cast<std::size_t>(depth), ']');
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json_input: nesting is allowed up to the limit and refused one level past it", "[unit]") {
  REQUIRE(dts::parse_json(nested(kMaxJsonDepth), "f.json").is_array());
  const std::string e = error_of([] { dts::parse_json(nested(kMaxJsonDepth + 1), "f.json"); });
  REQUIRE_THAT(e, Contains("f.json:/0/0/0") && Contains("nesting deeper than 64 levels"));
  // Objects count as arrays do; the path names the keys.
  std::string obj = "1";
  for (int i = 0; i <= kMaxJsonDepth; ++i) obj = "{\"k\": " + obj + "}";
  REQUIRE_THAT(error_of([&] { dts::parse_json(obj, "f.json"); }), Contains("f.json:/k/k/k") && Contains("nesting"));
  // Far past the limit: refused as it is read, before anything recursive sees it.
  REQUIRE_THAT(error_of([] { dts::parse_json(nested(1'000'000), "f.json"); }), Contains("nesting"));
}

TEST_CASE("json_input: the path of an error counts array elements and names keys", "[unit]") {
  const std::string e = error_of([] { dts::parse_json(R"({"a": [1, 2, {"b": 1e400}]})", "f.json"); });
  REQUIRE_THAT(e, Contains("f.json:/a/2/b: number 1e400 is beyond the range of a double"));
  REQUIRE_THAT(error_of([] { dts::parse_json(R"({"a": [1, 2,)", "f.json"); }),
               Contains("f.json:/a/2: invalid JSON") && Contains("line 1"));
  REQUIRE_THAT(error_of([] { dts::parse_json("", "f.json"); }), Contains("f.json: invalid JSON"));
}

TEST_CASE("json_input: a --set value is JSON, or a bare string when it is no JSON at all", "[unit]") {
  REQUIRE(*dts::parse_json_or_text("[1, 2]", "--set a=", "/a", 1) == nlohmann::json({1, 2}));
  REQUIRE(!dts::parse_json_or_text("fast", "--set a=", "/a", 1).has_value());
  REQUIRE(!dts::parse_json_or_text("[[[", "--set a=", "/a", 1).has_value());
  // The value's own depth adds to the objects around it in the document.
  REQUIRE(dts::parse_json_or_text(nested(kMaxJsonDepth - 2), "--set a.b=", "/a/b", 2).has_value());
  REQUIRE_THAT(error_of([] { dts::parse_json_or_text(nested(kMaxJsonDepth - 1), "--set a.b=", "/a/b", 2); }),
               Contains("--set a.b=:/a/b/0/0") && Contains("nesting deeper than 64 levels"));
  REQUIRE_THAT(error_of([] { dts::parse_json_or_text("-1e999", "--set a=", "/a", 1); }), Contains("-1e999"));
}

TEST_CASE("json_input: echo cuts long values at a UTF-8 boundary", "[unit]") {
  REQUIRE(dts::echo("short") == "short");
  REQUIRE(dts::echo(std::string(200, 'x')) == std::string(80, 'x') + "...");
  const std::string accents = std::string(79, 'x') + "\xc3\xa9\xc3\xa9";  // byte 80 is inside an é
  REQUIRE(dts::echo(accents) == std::string(79, 'x') + "...");
  REQUIRE(dts::echo_json(nlohmann::json(std::vector<int>(1000, 7))).size() == 83);
  REQUIRE(dts::valid_utf8("caf\xc3\xa9"));
  REQUIRE(!dts::valid_utf8("caf\xc3"));
}

TEST_CASE("ConfigReader: 2^64-1 is out of range as itself, not as -1; long values are cut", "[unit]") {
  const auto j = nlohmann::json::parse(R"({"n": 18446744073709551615, "s": ")" + std::string(500, 's') + R"("})");
  dts::ConfigReader r(j, "f.json", "");
  REQUIRE_THAT(error_of([&] { r.integer("n", 0, 0, 10); }),
               Contains("f.json:/n: value 18446744073709551615 out of range [0, 10]"));
  const std::string e = error_of([&] { r.number("s", 0, 0, 1); });
  REQUIRE_THAT(e, Contains("expected a number, got \"sss") && Contains("..."));
  REQUIRE(e.size() < 150);
}
