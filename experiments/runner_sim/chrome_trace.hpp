// run.trace "chrome": the simulation's timeline as a Chrome trace (the Trace Event Format that Perfetto and
// chrome://tracing open), written as the simulation runs. One process per rank, one thread per actor (the
// rank's own, then each activity it spawns); a complete event ("X") per stretch of the time account
// (sim/time_account.hpp), named by its category (forward_backward, gpu_update, inter_node_parameter, idle,
// ...), so that a rank's stretches of one category sum to its time in summary.json's time_breakdown; and an
// async event per message on the wire, on its sender; and under a process "links", a counter per link with the
// share of its bandwidth in use (sim/link_load.hpp). Times in microseconds of simulated time.
#pragma once

#include <cstdio>
#include <set>
#include <string>
#include <utility>

#include "sim/time_account.hpp"

namespace dts::exp {

class ChromeTrace final : public sim::SpanSink {
 public:
  explicit ChromeTrace(const std::string& path);  // throws if it cannot write there
  ~ChromeTrace() override;
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;
  void span(const sim::Span& s) override;
  void message(const sim::Message& m) override;
  void link_load(const std::string& link, double begin_s, double share) override;
  // Ends the JSON document and closes the file; throws if writing failed.
  void close();

 private:
  void event(const std::string& json);
  void name_actor(Rank rank, long actor, bool main);
  std::string path_;
  std::FILE* f_ = nullptr;
  bool first_ = true;
  std::set<std::pair<Rank, long>> named_;  // (rank, actor) whose track has a name
  long messages_ = 0;
  bool links_named_ = false;
};

}  // namespace dts::exp
