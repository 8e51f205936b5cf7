// The scenario's effect on compute time, and the draw of a fraction of the workers.
#include "algorithms/api/scenario.hpp"

#include <algorithm>
#include <cmath>

#include "core/hash.hpp"
#include "kernels/rng.hpp"

namespace dts {
namespace {

bool names(const std::vector<Rank>& ranks, Rank r) { return std::find(ranks.begin(), ranks.end(), r) != ranks.end(); }

}  // namespace

bool Scenario::has_link_windows() const {
  return std::any_of(links.begin(), links.end(), [](const LinkChange& c) { return c.windowed(); });
}

bool Scenario::slows(Rank r) const {
  return std::any_of(stragglers.begin(), stragglers.end(), [r](const Straggler& s) { return names(s.ranks, r); }) ||
         std::any_of(jitter.begin(), jitter.end(), [r](const Jitter& j) { return names(j.ranks, r); });
}

double Scenario::jitter_factor(Rank r, std::int64_t step) const {
  double f = 1;
  for (std::size_t i = 0; i < jitter.size(); ++i) {
    const Jitter& j = jitter[i];
    if (!names(j.ranks, r)) continue;
    // One stream per (jitter entry, step): the draw does not depend on how many draws came before.
    Rng rng(seed, static_cast<std::uint64_t>(r),
            fnv1a_step(fnv1a_step(stream_id("scenario jitter"), i), static_cast<std::uint64_t>(step)));
    if (j.model == Jitter::Model::kLognormal) {
      f *= std::exp(j.sigma * rng.normal());
    } else if (rng.uniform() < j.probability) {
      f *= j.factor;
    }
  }
  return f;
}

double Scenario::stretch(Rank r, std::int64_t step, double start_s, double seconds) const {
  if (seconds <= 0) return seconds;
  const double jitter_f = jitter_factor(r, step);
  double t = start_s, work = seconds;  // work: what is left, in seconds at full speed
  for (;;) {
    double f = jitter_f, next = kNever;  // the factor now, and when it next changes
    for (const Straggler& s : stragglers) {
      if (!names(s.ranks, r)) continue;
      if (t >= s.from_s && t < s.until_s) {
        f *= s.factor;
        next = std::min(next, s.until_s);
      } else if (s.from_s > t) {
        next = std::min(next, s.from_s);
      }
    }
    if (next == kNever || t + work * f <= next) return t + work * f - start_s;
    work -= (next - t) / f;
    t = next;
  }
}

std::vector<Rank> draw_ranks(double fraction, int workers, Rank first_worker, std::uint64_t seed) {
  const auto count = static_cast<int>(std::lround(fraction * workers));
  std::vector<Rank> pool(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) pool[static_cast<std::size_t>(i)] = first_worker + i;
  Rng rng(seed, 0, stream_id("scenario fraction"));
  for (int i = 0; i < count; ++i) {  // a partial Fisher-Yates shuffle
    const auto j = static_cast<std::size_t>(i) + rng.below(static_cast<std::uint64_t>(workers - i));
    std::swap(pool[static_cast<std::size_t>(i)], pool[j]);
  }
  pool.resize(static_cast<std::size_t>(count));
  std::sort(pool.begin(), pool.end());
  return pool;
}

}  // namespace dts
