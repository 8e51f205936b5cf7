// Per-link utilisation over simulated time, for timelines (run.trace chrome): after each advance of the
// clock, every link's usage during the interval just ended (the sum of its flows' rates in SimGrid's
// bandwidth-sharing solution for that interval) as a share of its bandwidth, told to the sink when it
// changes. It visits every link at every advance: meant for the small runs one looks at as a timeline.
#pragma once

#include <simgrid/s4u.hpp>
#include <vector>

#include "sim/time_account.hpp"

namespace dts::sim {

class LinkLoadProbe {
 public:
  // From now until destroyed; one probe per engine. The links are those of the platform already built.
  explicit LinkLoadProbe(SpanSink& sink);
  ~LinkLoadProbe();
  LinkLoadProbe(const LinkLoadProbe&) = delete;
  LinkLoadProbe& operator=(const LinkLoadProbe&) = delete;

 private:
  void advanced(double delta_s);

  SpanSink& sink_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<double> last_;  // the share last told, per link; -1: none yet
};

}  // namespace dts::sim
