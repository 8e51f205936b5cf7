// The part of a Compute that the rank's model::Trainer answers, shared by the simulator's and the MPI
// backend's Computes: sizes, the initial model, and the checked calls into the kernels. The backends add
// what costs time (the simulator charges its device model; MPI lets wall time pass).
#pragma once

#include "algorithms/api/compute.hpp"
#include "algorithms/api/request.hpp"
#include "kernels/model/trainer.hpp"

namespace dts {

class TrainerCompute : public Compute {
 public:
  std::size_t num_params() const final { return trainer_.num_params(); }
  bool real() const final { return real_; }
  std::vector<model::ParamBlock> param_blocks() const final { return trainer_.param_blocks(); }
  // The seed's initial model with real numerics; nothing to write with modeled ones.
  void init_params(Slice params) final;
  // GossipGraD's (Compute's end): the Trainer's optimizer state and shard rows.
  std::vector<Slice> optimizer_state() final;
  std::vector<std::uint32_t> next_batch_rows() final { return trainer_.next_rows(); }
  void replace_last_batch_rows(std::span<const std::uint32_t> rows) final { trainer_.replace_last_rows(rows); }
  std::uint64_t raw_batch_bytes() const final { return trainer_.raw_batch_bytes(); }
  std::size_t take_over_shards(std::span<const int> lost, int part, int parts) final {
    return trainer_.take_over_shards(lost, part, parts);
  }

 protected:
  TrainerCompute(const model::TrainerSetup& setup, Rank rank) : trainer_(setup, rank), real_(setup.real) {}
  // The trainer's forward and backward pass on the next minibatch (a NaN loss with modeled numerics).
  float train(ConstSlice params, Slice grads);
  // The trainer's optimizer step (nothing with modeled numerics).
  void update(Slice params, ConstSlice grads);
  // The trainer's optimizer on a range (Compute::optimizer_step_range; nothing with modeled numerics).
  void update_range(Slice params, ConstSlice grads, std::size_t offset, std::int64_t iteration);
  const model::Trainer& trainer() const { return trainer_; }

 private:
  model::Trainer trainer_;
  bool real_;
};

}  // namespace dts
