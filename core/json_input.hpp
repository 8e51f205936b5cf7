// Reading input JSON (experiment, platform and catalog files, --set values) with limits a user's file cannot
// break: nesting depth (nlohmann copies, merges and prints recursively, so a deep value would overflow the stack),
// numbers a double can hold, and messages that name the file and the JSON path, with long values cut short.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/errors.hpp"

namespace dts {

// Arrays and objects nest at most this deep in input JSON; deeper input is refused while it is parsed.
inline constexpr int kMaxJsonDepth = 64;

// Parses JSON text. Invalid JSON, a number beyond a double's range, or nesting deeper than kMaxJsonDepth is a
// ConfigError naming `file` and the JSON path where it was found ("exp.json:/run/steps: ...").
nlohmann::json parse_json(const std::string& text, const std::string& file);
// As parse_json, for a value that goes at `path` of a document, inside `depth` objects there (--set): text that
// is no JSON at all (a syntax error) gives nullopt, a bare string. Too deep or out-of-range JSON is still an error.
std::optional<nlohmann::json> parse_json_or_text(const std::string& text, const std::string& file,
                                                 const std::string& path, int depth);

// Why `path` cannot be read as an input file, or "" when it can be tried: "not found", "a directory, not a
// file", or the system's reason ("File name too long"). Never throws.
std::string input_file_problem(const std::string& path);
// An absolute, normal form of `path` that names one file once (for cycles); never throws.
std::string file_identity(const std::string& path);

// Reads and parses a JSON file. A missing or unreadable file, a directory, or bad JSON is a ConfigError naming
// the file and `what` it is ("experiment file").
nlohmann::json read_json_file(const std::string& file, const std::string& what);

// A user's value for a message, as JSON text cut as echo() (errors.hpp) cuts a string.
std::string echo_json(const nlohmann::json& value, std::size_t max = 80);

// Whether `text` is valid UTF-8 (nlohmann refuses to print a string that is not).
bool valid_utf8(const std::string& text);

}  // namespace dts
