// ring_recurrence (sim/ring_recurrence.hpp) gives, to the bit, what the recurrence gives computed step by step
// over every member (the reference below, the form it had before it was blocked for the cache), for rings on
// either side of the size where blocking begins, with member figures that differ, chunks of two sizes or one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>

#include "sim/ring_recurrence.hpp"

using dts::sim::RingFigures;
using dts::sim::RingStep;

namespace {

// Step by step: every member's arrival, then every member's next start.
std::vector<double> reference(std::vector<double> st, const RingFigures& f, const std::vector<RingStep>& steps,
                              std::size_t extra) {
  const std::size_t p = st.size();
  std::vector<double> ar(p);
  for (const RingStep& s : steps) {
    const auto big = [&](std::size_t i) { return (s.chunk0 + i) % p < extra; };
    for (std::size_t i = 0; i < p; ++i) ar[i] = st[i] + (big(i) ? f.wire_big[i] : f.wire_small[i]);
    for (std::size_t i = 0; i < p; ++i) {
      const std::size_t left = (i + p - 1) % p;
      const double add = s.adds ? (big(left) ? f.add_big[i] : f.add_small[i]) : 0.0;
      st[i] = std::max(std::max(st[i], ar[left]) + add, ar[i]);
    }
  }
  return st;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// A ring allreduce's steps (reduce-scatter, then allgather) on p members, with random figures: a few distinct
// values per figure (as the sampled flows give), and starts spread over a millisecond.
void check(std::size_t p, std::size_t extra, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  RingFigures f;
  std::vector<double> start(p);
  for (std::size_t i = 0; i < p; ++i) {
    const double jitter = static_cast<double>(rng() % 3) * 1e-18;
    f.wire_small.push_back(1e-3 + jitter);
    f.wire_big.push_back(1.0001e-3 + jitter);
    f.add_small.push_back(rng() % 4 == 0 ? 2e-3 : 1e-4 + jitter);
    f.add_big.push_back(f.add_small.back() * 1.0001);
    start[i] = 10 + 1e-3 * u(rng);
  }
  std::vector<RingStep> steps;
  for (std::size_t s = 0; s + 1 < 2 * p; ++s) {
    RingStep step;
    step.chunk0 = (p - s % p + 3) % p;
    step.adds = s + 1 < p;
    steps.push_back(step);
  }
  const std::vector<double> want = reference(start, f, steps, extra);
  std::vector<double> got = start;
  dts::sim::ring_recurrence(got, f, steps, extra);
  INFO("p " << p << " extra " << extra);
  CHECK(same_bits(got, want));
  CHECK(*std::max_element(got.begin(), got.end()) >
        10 + 2 * static_cast<double>(p - 1) * 1e-3);  // every step took its time
}

}  // namespace

TEST_CASE("ring_recurrence: the same bits as step by step, small rings", "[sim]") {
  for (const std::size_t p : {2, 3, 7, 96, 1000}) {
    check(p, p / 3, static_cast<std::uint32_t>(p));
    check(p, 0, 1);
  }
}

TEST_CASE("ring_recurrence: the same bits as step by step, rings in cache-sized blocks", "[sim]") {
  for (const std::size_t p : {2303, 2304, 2305, 5000}) check(p, p - 17, static_cast<std::uint32_t>(p));
  check(4096, 0, 3);
  check(4097, 1, 4);
}
