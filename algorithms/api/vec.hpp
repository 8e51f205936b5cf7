// Model-sized float vectors that may carry no data. In real numerics a Vec holds `count` floats; in modeled
// numerics (DESIGN.md §3) it holds none and only `count` is real, so the same algorithm code charges a 100 MB
// message or a 25 M-parameter update while no math runs. Slices keep both the data view and the logical count.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/errors.hpp"
#include "kernels/huge_pages.hpp"

namespace dts {

// A view of `count` logical floats; `data` is either `count` floats or empty (modeled).
struct Slice {
  std::span<float> data;
  std::size_t count = 0;
  Slice() = default;
  Slice(std::span<float> d) : data(d), count(d.size()) {}  // NOLINT: implicit from real data
  Slice(std::span<float> d, std::size_t n) : data(d), count(n) {}
  bool real() const { return !data.empty() || count == 0; }
  Slice sub(std::size_t offset, std::size_t n) const {
    DTS_ASSERT(offset + n <= count, "slice out of range");
    return data.empty() ? Slice({}, n) : Slice(data.subspan(offset, n), n);
  }
};

struct ConstSlice {
  std::span<const float> data;
  std::size_t count = 0;
  ConstSlice() = default;
  ConstSlice(std::span<const float> d) : data(d), count(d.size()) {}  // NOLINT
  ConstSlice(std::span<const float> d, std::size_t n) : data(d), count(n) {}
  ConstSlice(Slice s) : data(s.data), count(s.count) {}  // NOLINT
  bool real() const { return !data.empty() || count == 0; }
  ConstSlice sub(std::size_t offset, std::size_t n) const {
    DTS_ASSERT(offset + n <= count, "slice out of range");
    return data.empty() ? ConstSlice({}, n) : ConstSlice(data.subspan(offset, n), n);
  }
};

class Vec {
 public:
  Vec() = default;
  Vec(std::size_t count, bool materialized) : data_(materialized ? count : 0), count_(count) {}
  std::size_t count() const { return count_; }
  bool real() const { return data_.size() == count_; }
  Slice slice() { return {std::span<float>(data_), count_}; }
  ConstSlice slice() const { return {std::span<const float>(data_), count_}; }
  Slice sub(std::size_t offset, std::size_t n) { return slice().sub(offset, n); }
  operator Slice() { return slice(); }             // NOLINT
  operator ConstSlice() const { return slice(); }  // NOLINT
  std::span<float> data() { return data_; }
  std::span<const float> data() const { return data_; }

 private:
  BigFloats data_;
  std::size_t count_ = 0;
};

}  // namespace dts
