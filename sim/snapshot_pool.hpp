// Buffers for message snapshots, kept for reuse: a snapshot of a parameter vector is megabytes, and
// allocating it afresh costs a page fault per 4 KiB page (expensive on a VM), for every message that
// arrives before its receive is posted (or is sent without SendOptions::borrow). Contents are never
// initialized: a snapshot is written whole before it is read.
#pragma once

#include <cstddef>
#include <map>
#include <memory>

#include "kernels/huge_pages.hpp"

namespace dts::sim {

// `count` floats from HugePageAllocator.
struct SnapshotFree {
  std::size_t count = 0;
  void operator()(float* p) const noexcept { HugePageAllocator<float>{}.deallocate(p, count); }
};
using Snapshot = std::unique_ptr<float[], SnapshotFree>;

class SnapshotPool {
 public:
  // Spare floats kept at most (256 MiB); beyond that, given-back buffers are freed.
  static constexpr std::size_t kMaxSpareFloats = std::size_t{1} << 26;

  Snapshot take(std::size_t count) {
    const auto it = spare_.find(count);
    if (it == spare_.end()) return Snapshot(HugePageAllocator<float>{}.allocate(count), SnapshotFree{count});
    Snapshot buf = std::move(it->second);
    spare_.erase(it);
    spare_floats_ -= count;
    return buf;
  }
  void give(Snapshot buf) {
    const std::size_t count = buf.get_deleter().count;
    if (!buf || spare_floats_ + count > kMaxSpareFloats) return;
    spare_floats_ += count;
    spare_.emplace(count, std::move(buf));
  }

 private:
  std::multimap<std::size_t, Snapshot> spare_;  // by size in floats
  std::size_t spare_floats_ = 0;
};

}  // namespace dts::sim
