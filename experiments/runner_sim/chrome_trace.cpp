// The Chrome trace writer (chrome_trace.hpp).
#include "experiments/runner_sim/chrome_trace.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace dts::exp {
namespace {

std::string us(double s) {  // simulated seconds as microseconds, to the picosecond
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", s * 1e6);
  return buf;
}

// The process that holds the link counters, after every rank's.
constexpr const char* kLinksPid = "1000000000";

}  // namespace

ChromeTrace::ChromeTrace(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "w")) {
  if (f_ == nullptr) throw std::runtime_error("cannot write " + path);
  std::fputs("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"clock\": \"simulated\"},\n\"traceEvents\": [\n", f_);
}

ChromeTrace::~ChromeTrace() {
  if (f_ != nullptr) std::fclose(f_);
}

void ChromeTrace::event(const std::string& json) {
  if (!first_) std::fputs(",\n", f_);
  first_ = false;
  std::fputs(json.c_str(), f_);
}

void ChromeTrace::name_actor(Rank rank, long actor, bool main) {
  if (!named_.insert({rank, actor}).second) return;
  const std::string pid = std::to_string(rank), tid = std::to_string(actor);
  if (main) {
    event("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + pid + ", \"args\": {\"name\": \"rank " + pid +
          "\"}}");
    event("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": " + pid + ", \"args\": {\"sort_index\": " + pid +
          "}}");
  }
  event("{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " + pid + ", \"tid\": " + tid +
        ", \"args\": {\"name\": \"" + (main ? std::string("rank ") + pid : "activity " + tid) + "\"}}");
}

void ChromeTrace::span(const sim::Span& s) {
  name_actor(s.rank, s.actor, s.main);
  const char* name = sim::to_string(s.category);
  event(std::string("{\"ph\": \"X\", \"name\": \"") + name + "\", \"cat\": \"" +
        (sim::is_communication(s.category)        ? "communication"
         : s.category == sim::TimeCategory::kIdle ? "wait"
                                                  : "compute") +
        "\", \"pid\": " + std::to_string(s.rank) + ", \"tid\": " + std::to_string(s.actor) +
        ", \"ts\": " + us(s.begin_s) + ", \"dur\": " + us(s.end_s - s.begin_s) + "}");
}

void ChromeTrace::message(const sim::Message& m) {
  if (m.from < 0) return;
  const std::string id = std::to_string(++messages_), pid = std::to_string(m.from);
  const std::string head = std::string("{\"cat\": \"message\", \"name\": \"") + sim::to_string(m.category) + " to " +
                           (m.dst != nullptr ? m.dst->get_cname() : "?") + "\", \"id\": " + id + ", \"pid\": " + pid +
                           ", \"tid\": 0, ";
  event(head + "\"ph\": \"b\", \"ts\": " + us(m.start_s) + "}");
  event(head + "\"ph\": \"e\", \"ts\": " + us(m.end_s) + "}");
}

void ChromeTrace::link_load(const std::string& link, double begin_s, double share) {
  if (!links_named_) {
    links_named_ = true;
    event(std::string("{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": ") + kLinksPid +
          ", \"args\": {\"name\": \"links\"}}");
    event(std::string("{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": ") + kLinksPid +
          ", \"args\": {\"sort_index\": " + kLinksPid + "}}");
  }
  char value[32];
  std::snprintf(value, sizeof value, "%.9g", share);
  event("{\"ph\": \"C\", \"name\": " + nlohmann::json(link).dump() + ", \"pid\": " + kLinksPid +
        ", \"ts\": " + us(begin_s) + ", \"args\": {\"share\": " + value + "}}");
}

void ChromeTrace::close() {
  if (f_ == nullptr) return;
  std::fputs("\n]}\n", f_);
  const bool ok = std::ferror(f_) == 0;
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!ok || !closed) throw std::runtime_error("cannot write " + path_);
}

}  // namespace dts::exp
