// QuadraticCompute: f_i(x) = 1/2 |x - c_i|^2, gradient x - c_i, plain SGD or heavy-ball momentum.
#include "tests/support/quadratic_compute.hpp"

#include <utility>

#include "kernels/rng.hpp"

namespace dts::test {

std::vector<float> QuadraticProblem::target(int worker) const {
  Rng rng(seed, same_target ? 0 : static_cast<std::uint64_t>(worker), "quadratic");
  std::vector<float> c(dim);
  for (auto& v : c) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  return c;
}

std::vector<double> QuadraticProblem::mean_target() const {
  std::vector<double> m(dim, 0.0);
  for (int i = 0; i < workers; ++i) {
    const auto c = target(i);
    for (std::size_t k = 0; k < dim; ++k) m[k] += static_cast<double>(c[k]) / workers;
  }
  return m;
}

QuadraticCompute::QuadraticCompute(const QuadraticProblem& p, int worker, std::function<void(double)> charge)
    : p_(p), charge_(std::move(charge)), worker_(worker) {
  if (worker >= 0) c_ = p.target(worker);
  if (worker >= 0 && p.shard_rows > 0) {
    DTS_ASSERT(p.shard_rows % p.batch_rows == 0, "QuadraticProblem: shard_rows must be a multiple of batch_rows");
    for (int i = 0; i < p.shard_rows; ++i) shard_.push_back(static_cast<std::uint32_t>(worker * p.shard_rows + i));
  }
  const auto w = static_cast<std::size_t>(worker);
  const double slow = worker >= 0 && w < p.slowdown.size() ? p.slowdown[w] : 1.0;
  step_time_s_ = p.step_time_s * slow;
  update_time_s_ = p.update_time_s * (p.slow_updates ? slow : 1.0);
}

std::vector<model::ParamBlock> QuadraticCompute::param_blocks() const {
  // Block k of B: the first dim % B blocks get one extra element.
  const std::size_t B = static_cast<std::size_t>(p_.blocks), base = p_.dim / B, extra = p_.dim % B;
  DTS_ASSERT(p_.block_sizes.empty() || p_.block_sizes.size() == B, "QuadraticProblem: block_sizes need `blocks` sizes");
  std::vector<model::ParamBlock> blocks;
  for (std::size_t k = 0, offset = 0; k < B; ++k) {
    const std::size_t n = p_.block_sizes.empty() ? base + (k < extra ? 1 : 0) : p_.block_sizes[k];
    blocks.push_back({std::to_string(k), offset, n});
    offset += n;
  }
  return blocks;
}

void QuadraticCompute::init_params(Slice params) {
  for (std::size_t k = 0; k < params.data.size(); ++k) params.data[k] = p_.init_at_target && !c_.empty() ? c_[k] : 0.0f;
}

float QuadraticCompute::gradient(ConstSlice params, Slice grads) {
  DTS_ASSERT(!c_.empty(), "forward_backward on a server rank");
  double loss = 0;
  for (std::size_t k = 0; k < p_.dim; ++k) {
    grads.data[k] = params.data[k] - c_[k];
    loss += 0.5 * grads.data[k] * grads.data[k];
  }
  if (!shard_.empty()) {  // the batch's rows, taken in order
    const auto b = static_cast<std::size_t>(p_.batch_rows);
    if (p_.rows_used) {
      auto& log = (*p_.rows_used)[static_cast<std::size_t>(worker_)];
      log.insert(log.end(), shard_.begin() + static_cast<std::ptrdiff_t>(pos_),
                 shard_.begin() + static_cast<std::ptrdiff_t>(pos_ + b));
    }
    pos_ = (pos_ + b) % shard_.size();
    if (pos_ == 0 && !next_shard_.empty()) shard_ = std::exchange(next_shard_, {});
  }
  return static_cast<float>(loss);
}

float QuadraticCompute::forward_backward(ConstSlice params, Slice grads) {
  const float loss = gradient(params, grads);
  charge_(step_time_s_);
  return loss;
}

float QuadraticCompute::forward_backward_hooked(ConstSlice params, Slice grads, const StepHooks& hooks) {
  const float loss = gradient(params, grads);
  if (!hooks.layer_ready) {
    charge_(step_time_s_ / 2);
    if (hooks.after_forward) hooks.after_forward();
    charge_(step_time_s_ / 2);
    return loss;
  }
  charge_(step_time_s_ / 3);
  if (hooks.after_forward) hooks.after_forward();
  const auto layers = static_cast<std::size_t>(p_.blocks);
  for (std::size_t l = layers; l-- > 0;) {
    charge_(step_time_s_ * 2 / 3 / static_cast<double>(layers));
    hooks.layer_ready(l);
  }
  return loss;
}

std::vector<Slice> QuadraticCompute::optimizer_state() {
  if (p_.momentum == 0) return {};
  if (b_.empty()) b_.assign(p_.dim, 0.0f);
  return {Slice(b_)};
}

std::vector<std::uint32_t> QuadraticCompute::next_batch_rows() {
  if (shard_.empty()) return {};
  const auto from = shard_.begin() + static_cast<std::ptrdiff_t>(pos_);
  return {from, from + p_.batch_rows};
}

void QuadraticCompute::replace_last_batch_rows(std::span<const std::uint32_t> rows) {
  if (shard_.empty()) return;
  DTS_ASSERT(rows.size() == static_cast<std::size_t>(p_.batch_rows), "replace_last_batch_rows: wrong count");
  const std::size_t last = (pos_ + shard_.size() - rows.size()) % shard_.size();
  std::copy(rows.begin(), rows.end(), shard_.begin() + static_cast<std::ptrdiff_t>(last));
}

std::size_t QuadraticCompute::take_over_shards(std::span<const int> lost, int part, int parts) {
  if (shard_.empty()) return 0;
  const auto own_rows = [&](int w) {
    std::vector<std::uint32_t> rows;
    for (int i = 0; i < p_.shard_rows; ++i) rows.push_back(static_cast<std::uint32_t>(w * p_.shard_rows + i));
    return rows;
  };
  std::vector<std::uint32_t> rows = own_rows(worker_);
  for (const int r : lost) {
    const auto theirs = own_rows(r - p_.first_worker_rank);
    const auto cut = [&](int k) { return theirs.begin() + static_cast<std::ptrdiff_t>(theirs.size() * k / parts); };
    rows.insert(rows.end(), cut(part), cut(part + 1));
  }
  DTS_ASSERT(rows.size() % static_cast<std::size_t>(p_.batch_rows) == 0, "take_over_shards: not whole batches");
  const std::size_t taken = rows.size() - static_cast<std::size_t>(p_.shard_rows);
  next_shard_ = std::move(rows);
  return taken;
}

std::uint64_t QuadraticCompute::raw_batch_bytes() const {
  return shard_.empty() ? 0 : static_cast<std::uint64_t>(p_.batch_rows) * (p_.row_bytes + 4);
}

void QuadraticCompute::optimizer_step(Slice params, ConstSlice grads) {
  DTS_ASSERT(params.count == p_.dim, "optimizer_step: wrong size");
  update(params, grads, 0);
}

void QuadraticCompute::optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t) {
  update(params, grads, offset);
}

void QuadraticCompute::update(Slice params, ConstSlice grads, std::size_t offset) {
  DTS_ASSERT(params.count == grads.count && offset + params.count <= p_.dim, "optimizer step: wrong range");
  if (p_.momentum == 0) {
    for (std::size_t k = 0; k < params.count; ++k) params.data[k] -= static_cast<float>(p_.lr) * grads.data[k];
  } else {
    if (b_.empty()) b_.assign(p_.dim, 0.0f);
    for (std::size_t k = 0; k < params.count; ++k) {
      float& b = b_[offset + k];
      b = static_cast<float>(p_.momentum) * b + grads.data[k];
      params.data[k] -= static_cast<float>(p_.lr) * b;
    }
  }
  charge_(update_time_s_);
}

void QuadraticCompute::charge_elementwise(std::size_t, int) { charge_(update_time_s_); }

}  // namespace dts::test
