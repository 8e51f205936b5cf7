// A Compute with a known answer (STYLE.md §7): worker i minimizes f_i(x) = 1/2 |x - c_i|^2, so the
// minimizer of the sum, which every consensus algorithm must reach, is the mean of the c_i. No kernels and
// no data set; time is charged through a callback (simulated time in tests/sim, nothing elsewhere).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "algorithms/api/compute.hpp"

namespace dts::test {

struct QuadraticProblem {
  int workers = 4;
  std::size_t dim = 8;
  std::uint64_t seed = 7;
  double lr = 0.1;
  double step_time_s = 1e-3;  // charged per forward_backward
  bool same_target = false;   // every worker gets c_0 (a consensus problem with no disagreement)
  // Added for the master-worker algorithms; the defaults keep the problem as it was.
  std::vector<double> slowdown;  // step_time_s multiplier per worker index (a straggler); missing: 1
  double update_time_s = 0;      // charged per optimizer_step and per charge_elementwise call
  double momentum = 0;           // optimizer_step as heavy ball: b = momentum b + g; x -= lr b
  int blocks = 1;                // param_blocks(): dim split into this many layers, for per-layer messages
  // Added for GossipGraD's ring shuffle: worker i's shard is the rows [i*shard_rows, (i+1)*shard_rows), read
  // in order, batch_rows per step (shard_rows a multiple of it); 0: no shard (raw_batch_bytes() is 0).
  int shard_rows = 0;
  int batch_rows = 2;
  std::uint64_t row_bytes = 100;  // raw bytes of one row on the wire (plus 4 label bytes)
  // Where each worker appends the rows it trains on, by worker index (null: nowhere).
  std::shared_ptr<std::vector<std::vector<std::uint32_t>>> rows_used;
  bool init_at_target = false;  // init_params gives x = c_i (the models start apart), not 0
  // Added for MPCA (issue 18): the rank of worker index 0, for take_over_shards' ranks; the blocks' sizes (their
  // sum dim, `blocks` their count) where they differ; empty: `blocks` blocks of nearly equal size.
  int first_worker_rank = 0;
  std::vector<std::size_t> block_sizes;
  // Added for BIDMach (issue 17): `slowdown` stretches the update time too (a node slow in everything it computes,
  // as a scenario straggler is).
  bool slow_updates = false;
  // c_i for worker index i (0-based), drawn from Rng(seed, i, "quadratic") in [-1, 1].
  std::vector<float> target(int worker) const;
  std::vector<double> mean_target() const;
};

class QuadraticCompute final : public Compute {
 public:
  // worker < 0: a server rank without a data term.
  QuadraticCompute(const QuadraticProblem& p, int worker, std::function<void(double)> charge);
  std::size_t num_params() const override { return p_.dim; }
  bool real() const override { return true; }
  std::vector<model::ParamBlock> param_blocks() const override;
  void init_params(Slice params) override;
  float forward_backward(ConstSlice params, Slice grads) override;
  void optimizer_step(Slice params, ConstSlice grads) override;
  void charge_elementwise(std::size_t n, int streams) override;
  std::vector<Slice> optimizer_state() override;
  // The step's time in halves around `after_forward`.
  std::vector<std::uint32_t> next_batch_rows() override;
  void replace_last_batch_rows(std::span<const std::uint32_t> rows) override;
  std::uint64_t raw_batch_bytes() const override;
  // Worker w's own rows are [w*shard_rows, (w+1)*shard_rows); the new shard, read from the next pass through
  // the shard on, must be a multiple of batch_rows.
  std::size_t take_over_shards(std::span<const int> lost, int part, int parts) override;
  // With layer_ready: a third of the step time as the forward pass, then an equal share of the rest before each
  // block's layer_ready(); with after_forward alone: half, then the other half.
  float forward_backward_hooked(ConstSlice params, Slice grads, const StepHooks& hooks) override;
  // optimizer_step on a range, with the momentum buffer at its offset (the lr is fixed: `iteration` is unused).
  void optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) override;

 private:
  float gradient(ConstSlice params, Slice grads);
  void update(Slice params, ConstSlice grads, std::size_t offset);
  QuadraticProblem p_;
  std::vector<float> c_;
  std::vector<float> b_;  // momentum buffer
  double step_time_s_ = 0, update_time_s_ = 0;
  std::function<void(double)> charge_;
  int worker_ = -1;
  std::vector<std::uint32_t> shard_;       // the rows this worker holds
  std::vector<std::uint32_t> next_shard_;  // take_over_shards', from the next pass on; empty: none
  std::size_t pos_ = 0;                    // the next batch starts here
};

}  // namespace dts::test
