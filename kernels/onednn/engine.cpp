// The shared oneDNN engine and stream, Staged tensors and the oneDNN error boundary (see engine.hpp).
// A reorder is built only when the layout a primitive chose differs from the caller's plain one, so that
// layers whose primitives accept plain layouts pay nothing.
#include "kernels/onednn/engine.hpp"

namespace dts::kernels::onednn::detail {

dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& stream() {
  static dnnl::stream strm(engine());
  return strm;
}

Staged::Staged(const dnnl::memory::desc& user_md, const dnnl::memory::desc& prim_md, Dir dir)
    : prim_md_(prim_md), user_(unbound(user_md)), reordered_(user_md != prim_md) {
  if (!reordered_) return;
  prim_ = dnnl::memory(prim_md, engine());  // owned buffer in the primitive's layout
  reorder_ = dir == Dir::kIn ? dnnl::reorder(user_, prim_) : dnnl::reorder(prim_, user_);
}

const dnnl::memory& Staged::input(const float* data) {
  set(user_, data);
  if (!reordered_) return user_;
  reorder_.execute(stream(), user_, prim_);
  return prim_;
}

const dnnl::memory& Staged::output(float* data) {
  set(user_, data);
  return reordered_ ? prim_ : user_;
}

void Staged::store() {
  if (reordered_) reorder_.execute(stream(), prim_, user_);
}

void throw_kernel_error(const std::string& layer, const dnnl::error& e) {
  throw KernelError(layer + ": oneDNN error (status " + std::to_string(static_cast<int>(e.status)) + "): " + e.what());
}

}  // namespace dts::kernels::onednn::detail
