// The compute half of the seam (DESIGN.md §2-3). One Compute per rank: it owns the rank's model replica
// kernels, data shard, optimizer state and device. sim/ charges every call to the device model (and with
// real numerics also runs the kernels); realexec/ runs the kernels and lets wall time pass.
// In modeled numerics the Vecs carry no data and only time is charged.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "algorithms/api/vec.hpp"
#include "kernels/model/grad_layers.hpp"
#include "kernels/model/network.hpp"

namespace dts {

class Compute {
 public:
  virtual ~Compute() = default;
  virtual std::size_t num_params() const = 0;
  // True when kernels run on real data (Vecs are materialized).
  virtual bool real() const = 0;
  Vec make_vec() const { return Vec(num_params(), real()); }
  // The layer blocks of the parameter vector, for per-layer communication.
  virtual std::vector<model::ParamBlock> param_blocks() const = 0;

  // The initial model, identical on every rank for one seed.
  virtual void init_params(Slice params) = 0;
  // One minibatch of this rank's shard: forward, loss, backward. Overwrites grads; returns the mean loss
  // (NaN in modeled numerics).
  virtual float forward_backward(ConstSlice params, Slice grads) = 0;
  // The experiment's optimizer (SGD, momentum, Nesterov, Adam, weight decay, lr policy) on this rank's state.
  virtual void optimizer_step(Slice params, ConstSlice grads) = 0;
  // Charges an elementwise pass over `n` floats touching `streams` vectors (axpy: 3), for update rules
  // that run outside the optimizer. The caller does the math itself, with algorithms/rules. The cost
  // should be linear in n: the simulator's collective fidelity charges the P - 1 additions of a ring
  // reduce-scatter as one call over their total.
  virtual void charge_elementwise(std::size_t n, int streams) = 0;
  // The same for the additions of a reduction (a collective's sums of received chunks, a server's aggregate of
  // its workers' pushes), which a backend may charge on other cores or at another efficiency than the model's
  // updates (the simulator: the device's reduce_efficiency). Default: charge_elementwise.
  virtual void charge_reduce(std::size_t n, int streams) { charge_elementwise(n, streams); }
  // forward_backward, then `then`, which waits for what the step overlaps (a reply in flight) and touches
  // neither params nor grads. The simulator calls `then` at the end of the step's time and runs the kernels
  // after it, when their results are about to be read (still in the host's caches); the same simulated times
  // and results as forward_backward followed by then(), which is what runs elsewhere.
  virtual float forward_backward_then(ConstSlice params, Slice grads, const std::function<void()>& then) {
    const float loss = forward_backward(params, grads);
    if (then) then();
    return loss;
  }

  // --- Added for GossipGraD (algorithms/gossipgrad.cpp, issue 16) ---
  // The optimizer's state buffers, num_params floats each, in the order the optimizer keeps them: momentum
  // and Nesterov {b}, Adam {m, v}, plain SGD none. Writable, for algorithms that average them between ranks.
  // Modeled numerics: data-less slices of the same count (their bytes still travel). Before the first step
  // the buffers hold zeros.
  virtual std::vector<Slice> optimizer_state() = 0;
  // The ring sample shuffle: the data-set rows (sample ids) the next forward_backward will train on, in its
  // order; empty without real samples (modeled numerics, the quadratic without a shard).
  virtual std::vector<std::uint32_t> next_batch_rows() = 0;
  // Puts `rows` into the shard in place of the rows the last forward_backward trained on (same count, same
  // order): they are trained on from the next local epoch on.
  virtual void replace_last_batch_rows(std::span<const std::uint32_t> rows) = 0;
  // Wire bytes of one minibatch of raw samples: batch x (one byte per pixel value) + 4 x batch label bytes; 0
  // without a data set (the quadratic without a shard).
  virtual std::uint64_t raw_batch_bytes() const = 0;
  // Hooks inside a forward_backward (GossipGraD's test point, AGD's layer-wise allreduce; issue 16).
  struct StepHooks {
    // Between the forward and the backward pass, where an MPI program calls MPI_Testall.
    std::function<void()> after_forward;
    // Once layer l's gradient in `grads` is final, for each layer l of model::grad_layers(param_blocks()), in
    // reverse layer order (back-propagation's).
    std::function<void(std::size_t layer)> layer_ready;
  };
  // forward_backward, calling the hooks that are set. The simulator charges the forward share of the step's
  // time, calls after_forward, then charges each layer's share of the backward pass (the layers behind it
  // included) before its layer_ready, so that communication started in a hook overlaps the rest of the step;
  // the shares add up to forward_backward's time (to rounding). This default, which the MPI backend uses, runs
  // forward_backward whole, then calls the hooks: real kernels compute the whole step in one call, so nothing
  // overlaps it there.
  virtual float forward_backward_hooked(ConstSlice params, Slice grads, const StepHooks& hooks) {
    const float loss = forward_backward(params, grads);
    if (hooks.after_forward) hooks.after_forward();
    if (hooks.layer_ready) {
      for (std::size_t l = model::grad_layers(param_blocks()).size(); l-- > 0;) hooks.layer_ready(l);
    }
    return loss;
  }

  // --- Added for the MXNet-style parameter server (algorithms/ps.cpp, issue 17) ---
  // The experiment's optimizer on floats [offset, offset + params.count) of the parameter vector: `params` and
  // `grads` hold that range only, the optimizer state used is the one at that offset, and `iteration` is the
  // number of updates the range has had before (the lr policy, momentum's first step and Adam's bias correction
  // read it; the counter of optimizer_step is neither read nor advanced). Steps over a partition of the vector
  // at optimizer_step's iteration equal one optimizer_step, bit for bit. Charged as optimizer_step of
  // params.count floats.
  virtual void optimizer_step_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration) = 0;

  // --- Added for MPCA's recovery (algorithms/mpca/worker.cpp, issue 18) ---
  // The workers of ranks `lost` have failed and this rank takes over part of their data: its shard becomes its
  // own samples plus, of each lost rank's own shard, the part-th of `parts` contiguous blocks (0 <= part <
  // parts), read from this rank's next local epoch on. Called again with a longer list it starts again from the
  // own shards, so what a lost rank had taken over passes on with the rest; the ring shuffle's exchanged rows
  // are forgotten. Returns the samples taken over: 0 without real samples (modeled numerics, no shard).
  virtual std::size_t take_over_shards(std::span<const int> lost, int part, int parts) = 0;
};

}  // namespace dts
