// Deterministic random numbers for every part of dtsim (DESIGN.md §6): all randomness derives from the
// experiment seed, a rank and a stream name. Our own distributions, because the standard library's are
// implementation-defined and would break bit-reproducibility across toolchains.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "core/hash.hpp"

namespace dts {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// FNV-1a of a stream name, so that "dropout" and "shuffle" streams never collide by accident.
constexpr std::uint64_t stream_id(std::string_view name) { return fnv1a(name); }

// xoshiro256** seeded from (seed, rank, stream) through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed, std::uint64_t rank = 0, std::uint64_t stream = 0) {
    std::uint64_t sm = seed ^ (rank * 0xD1B54A32D192ED03ull) ^ (stream * 0x8CB92BA72F3D8DD7ull);
    for (auto& word : s_) word = splitmix64(sm);
  }
  Rng(std::uint64_t seed, std::uint64_t rank, std::string_view stream) : Rng(seed, rank, stream_id(stream)) {}

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
  float uniform_f() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-32 for our sizes).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(next_u64()) * n) >> 64);
  }
  // Standard normal by Box-Muller (one value per call; the pair's second value is dropped for simplicity).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace dts
