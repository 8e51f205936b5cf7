// The replicas' mean, its evaluation and the consensus distance (replicas.hpp).
#include "experiments/runner/replicas.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"

namespace dts::exp {

void ReplicaSum::add(ConstSlice params, double time_s) {
  const std::size_t n = params.data.size();
  if (sum.empty()) sum.assign(n + 1, 0.0);
  DTS_ASSERT(sum.size() == n + 1, "replicas of different sizes");
  double sq = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = params.data[i];
    sum[i] += x;
    sq += x * x;
  }
  sum[n] += sq;
  ++count;
  last_time_s = std::max(last_time_s, time_s);
}

std::vector<float> ReplicaSum::mean() const {
  DTS_ASSERT(count > 0 && !sum.empty(), "no replica observed");
  std::vector<float> m(sum.size() - 1);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(sum[i] / count);
  return m;
}

double ReplicaSum::consensus_distance() const {
  DTS_ASSERT(count > 0 && !sum.empty(), "no replica observed");
  const std::size_t n = sum.size() - 1;
  double mean_sq = 0;
  for (std::size_t i = 0; i < n; ++i) mean_sq += (sum[i] / count) * (sum[i] / count);
  return std::sqrt(std::max(0.0, sum[n] / count - mean_sq));
}

MetricsRow aggregate_row(std::int64_t step, const ReplicaSum& s, Evaluator& evaluator) {
  MetricsRow r;
  r.time_s = s.last_time_s;
  r.rank = -1;
  r.step = step;
  r.aggregate = true;
  r.consensus_distance = s.consensus_distance();
  const std::vector<float> mean = s.mean();
  r.eval = evaluator.evaluate(ConstSlice{std::span<const float>(mean)});
  return r;
}

void InProcessReplicas::observe(std::int64_t step, ConstSlice params, double time_s) {
  ReplicaSum& s = open_[step];
  s.add(params, time_s);
  if (s.count < workers_) return;
  log_.rows.push_back(aggregate_row(step, s, evaluator_));
  open_.erase(step);
}

}  // namespace dts::exp
