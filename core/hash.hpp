// FNV-1a, 64-bit: dtsim's one non-cryptographic hash. Random stream names (kernels/rng.hpp), a group's members
// (algorithms/api/group.hpp) and the final model's bytes (summary.json "final_model_hash") go through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace dts {

inline constexpr std::uint64_t kFnv1aBasis = 0xcbf29ce484222325ull;  // 14695981039346656037
inline constexpr std::uint64_t kFnv1aPrime = 0x100000001b3ull;       // 1099511628211

// One step: `value` folded into `h`. The standard hash folds bytes; a caller may fold a wider value (a rank) whole.
constexpr std::uint64_t fnv1a_step(std::uint64_t h, std::uint64_t value) { return (h ^ value) * kFnv1aPrime; }

constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnv1aBasis) {
  for (const char c : bytes) h = fnv1a_step(h, static_cast<unsigned char>(c));
  return h;
}

inline std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h = kFnv1aBasis) {
  for (const std::byte b : bytes) h = fnv1a_step(h, std::to_integer<std::uint64_t>(b));
  return h;
}

}  // namespace dts
