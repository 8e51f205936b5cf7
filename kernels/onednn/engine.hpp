// Internal to kernels/onednn (not part of the public layers.hpp): the one CPU engine and stream that every
// layer shares, plain memory descriptors, Staged (a user buffer plus its reordered twin when a primitive
// picked a blocked layout through format_tag::any), and the single dnnl::error -> dts::KernelError boundary.
// Layer objects keep scratch memory and are not thread-safe: use one from one thread at a time.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>

#include "core/errors.hpp"

namespace dts::kernels::onednn::detail {

using Tag = dnnl::memory::format_tag;
using Dims = dnnl::memory::dims;

// Created on first use, shared by the whole process (function-local statics). On the CPU engine with the
// OpenMP runtime a primitive has finished when execute() returns; calls still end with stream().wait().
dnnl::engine& engine();
dnnl::stream& stream();

inline dnnl::memory::desc f32_md(const Dims& dims, Tag tag) { return {dims, dnnl::memory::data_type::f32, tag}; }

// A memory object over no buffer yet; point it at one with set(). oneDNN takes void*: inputs are only read.
inline dnnl::memory unbound(const dnnl::memory::desc& md) { return {md, engine(), DNNL_MEMORY_NONE}; }
inline const dnnl::memory& set(const dnnl::memory& mem, const float* data) {
  mem.set_data_handle(const_cast<float*>(data));
  return mem;
}

// One tensor argument of a primitive. The caller's buffer is plain (user_md); the primitive may want
// another layout (prim_md). When they differ, Staged owns a buffer in the primitive's layout and a reorder.
class Staged {
 public:
  enum class Dir { kIn, kOut };  // which way the data flows: into the primitive or out of it
  Staged() = default;
  Staged(const dnnl::memory::desc& user_md, const dnnl::memory::desc& prim_md, Dir dir);
  // Input: binds `data`, reorders it into the primitive's layout if needed; pass the result to execute().
  const dnnl::memory& input(const float* data);
  // Output: binds `data` and returns the memory the primitive must write; call store() after execute().
  const dnnl::memory& output(float* data);
  void store();  // reorders the primitive's result into the user's buffer if needed
  const dnnl::memory::desc& prim_md() const { return prim_md_; }

 private:
  dnnl::memory::desc prim_md_;
  dnnl::memory user_, prim_;
  dnnl::reorder reorder_;  // user -> prim for kIn, prim -> user for kOut
  bool reordered_ = false;
};

[[noreturn]] void throw_kernel_error(const std::string& layer, const dnnl::error& e);

// Runs fn() and returns its result; a dnnl::error becomes a KernelError naming `layer` (with its shape).
template <typename F>
auto guarded(const std::string& layer, F&& fn) -> decltype(fn()) {
  try {
    return std::forward<F>(fn)();
  } catch (const dnnl::error& e) {
    throw_kernel_error(layer, e);
  }
}

}  // namespace dts::kernels::onednn::detail
