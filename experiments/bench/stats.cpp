// Median, min and max of repeated measurements.
#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"
#include "experiments/bench/bench.hpp"

namespace dts::bench {

Stats stats_of(std::vector<double> samples) {
  DTS_ASSERT(!samples.empty(), "stats_of: no samples");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  Stats s;
  s.runs = static_cast<int>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return s;
}

std::string format_stats(const Stats& s, int digits) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.*g (%.*g-%.*g)", digits, s.median, digits, s.min, digits, s.max);
  return buf;
}

}  // namespace dts::bench
