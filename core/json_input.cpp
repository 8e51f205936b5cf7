// Bounded JSON parsing: a SAX handler that builds the document as nlohmann's own DOM parser does, keeps the
// JSON path of the value being read for messages, and refuses nesting past the limit before it is built.
#include "core/json_input.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;

namespace dts {
namespace {

using json = nlohmann::json;

class BoundedBuilder final : public nlohmann::json_sax<json> {
 public:
  // `outer`: the path of the value in a larger document, `outer_depth` the objects around it there.
  BoundedBuilder(json& root, std::string file, std::string outer, int outer_depth, bool syntax_errors_throw)
      : root_(root),
        file_(echo(file, 200)),
        outer_(std::move(outer)),
        outer_depth_(outer_depth),
        syntax_errors_throw_(syntax_errors_throw) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t& v) override { return add(std::move(v)); }
  bool start_object(std::size_t) override { return open(json::value_t::object); }
  bool start_array(std::size_t) override { return open(json::value_t::array); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string& token, const json::exception& e) override {
    if (e.id == 406) throw ConfigError(where(), "number " + echo(token) + " is beyond the range of a double");
    if (!syntax_errors_throw_) {
      syntax_error_ = true;
      return false;
    }
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    if (const auto cut = what.find("] "); cut != std::string::npos) what.erase(0, cut + 2);
    throw ConfigError(where(), "invalid JSON: " + echo(what, 240));
  }

  bool syntax_error() const { return syntax_error_; }

 private:
  struct Frame {
    json* node;
    std::string key;       // object: the key of the value being read
    std::size_t next = 0;  // array: the index of the value being read
  };

  // "/algorithm/optimizer/lr": the path of the value being read (an enclosing array's last element holds it).
  std::string path() const {
    std::string p = outer_;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p += "/" + (f.node->is_array() ? std::to_string(i + 1 < stack_.size() ? f.next - 1 : f.next) : echo(f.key, 40));
    }
    return echo(p, 160);
  }
  std::string where() const { return outer_.empty() && stack_.empty() ? file_ : file_ + ":" + path(); }

  // Places a value as the nlohmann DOM parser does (a repeated key keeps the last value).
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.node->is_array()) {
      f.node->push_back(std::move(v));
      ++f.next;
      return &f.node->back();
    }
    json& slot = (*f.node)[f.key];
    slot = std::move(v);
    return &slot;
  }
  bool add(json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(json::value_t type) {
    if (outer_depth_ + static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      throw ConfigError(where(), "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    stack_.push_back({place(json(type)), {}, 0});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  std::string file_, outer_;
  int outer_depth_;
  bool syntax_errors_throw_;
  bool syntax_error_ = false;
  std::vector<Frame> stack_;
};

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& file) {
  json root;
  BoundedBuilder b(root, file, "", 0, /*syntax_errors_throw=*/true);
  json::sax_parse(text, &b);
  return root;
}

std::optional<nlohmann::json> parse_json_or_text(const std::string& text, const std::string& file,
                                                 const std::string& path, int depth) {
  json root;
  BoundedBuilder b(root, file, path, depth, /*syntax_errors_throw=*/false);
  if (!json::sax_parse(text, &b) || b.syntax_error()) return std::nullopt;
  return root;
}

std::string input_file_problem(const std::string& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  if (s.type() == fs::file_type::not_found) return "not found";
  if (ec) return ec.message();
  if (s.type() == fs::file_type::directory) return "a directory, not a file";
  // A FIFO would block the open, a device never end: refused without opening them.
  if (s.type() != fs::file_type::regular) return "not a regular file";
  constexpr std::uintmax_t kMaxBytes = std::uintmax_t{64} << 20;
  if (fs::file_size(path, ec) > kMaxBytes) return "larger than 64 MiB, more than any experiment or platform file";
  return "";
}

std::string file_identity(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

nlohmann::json read_json_file(const std::string& file, const std::string& what) {
  if (const std::string why = input_file_problem(file); !why.empty())
    throw ConfigError(echo(file, 200), what + ": " + why);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file, what + " not found or unreadable");
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception& e) {  // libstdc++'s filebuf throws on a read error
    throw ConfigError(file, what + " unreadable: " + e.what());
  }
  return parse_json(text, file);
}

std::string echo_json(const nlohmann::json& value, std::size_t max) {
  return dts::echo(value.dump(-1, ' ', false, json::error_handler_t::replace), max);
}

bool valid_utf8(const std::string& text) {
  try {
    (void)json(text).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

}  // namespace dts
