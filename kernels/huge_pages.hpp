// Memory for model-sized buffers (parameters, gradients, optimizer state, message snapshots, data sets) in
// 2 MiB transparent huge pages. Touching fresh 4 KiB pages costs a page fault each, several times the cost
// per GiB of huge pages on the VMs this project runs on, and a simulated run of 8 workers touches a few
// hundred MiB of them. Buffers under kHugeMin bytes come from the ordinary heap. madvise is a request: where
// the kernel has transparent huge pages off, the buffer is ordinary memory.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace dts {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
inline constexpr std::size_t kHugeMin = std::size_t{4} << 20;

// `bytes` rounded up to whole huge pages, aligned to one: an anonymous mapping of its own, so that free
// returns it to the system and a later buffer is not carved from a fragmented heap.
inline std::size_t huge_len(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

inline void* huge_alloc(std::size_t bytes) {
  const std::size_t len = huge_len(bytes);
  void* p = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t aligned = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > base) munmap(p, aligned - base);
  if (const std::size_t tail = base + kHugePage - aligned; tail > 0) {
    munmap(reinterpret_cast<void*>(aligned + len), tail);
  }
  madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

inline void huge_free(void* p, std::size_t bytes) { munmap(p, huge_len(bytes)); }

// A std::allocator that puts allocations of kHugeMin bytes and more in huge pages.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>& /*other*/) noexcept {}  // NOLINT: rebinding is implicit
  T* allocate(std::size_t n) {
    if (n * sizeof(T) < kHugeMin) return std::allocator<T>{}.allocate(n);
    return static_cast<T*>(huge_alloc(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugeMin) {
      std::allocator<T>{}.deallocate(p, n);
    } else {
      huge_free(p, n * sizeof(T));
    }
  }
  friend bool operator==(const HugePageAllocator& /*a*/, const HugePageAllocator& /*b*/) { return true; }
};

// Floats of a model-sized buffer.
using BigFloats = std::vector<float, HugePageAllocator<float>>;

}  // namespace dts
