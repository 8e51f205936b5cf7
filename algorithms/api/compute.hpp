// The compute half of the seam (DESIGN.md §2-3). One Compute per rank: it owns the rank's model replica
// kernels, data shard, optimizer state and device. sim/ charges every call to the device model (and with
// real numerics also runs the kernels); realexec/ runs the kernels and lets wall time pass.
// In modeled numerics the Vecs carry no data and only time is charged.
#pragma once

#include <cstdint>
#include <functional>
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

  // Added for AGD (issue 16): layer-wise gradient readiness. forward_backward, calling ready(l) for each
  // layer l of model::grad_layers(param_blocks()) in reverse layer order (back-propagation's), once layer l's
  // gradient in `grads` is final. The simulator charges the forward pass, then before each ready() that
  // layer's share of the backward pass (the layers behind it included), so that communication started in
  // ready() overlaps the rest of the backward pass; the shares add up to forward_backward's time (to
  // rounding). This default, which the MPI backend uses, runs forward_backward whole and then calls every
  // ready(): real kernels compute the whole backward pass at once, so nothing overlaps it there.
  virtual float forward_backward_layers(ConstSlice params, Slice grads,
                                        const std::function<void(std::size_t layer)>& ready) {
    const float loss = forward_backward(params, grads);
    for (std::size_t l = model::grad_layers(param_blocks()).size(); l-- > 0;) ready(l);
    return loss;
  }
};

}  // namespace dts
