// One rank's training state, the same on every backend: its replica of the network, the minibatch stream
// over its data shard, and its optimizer. Backends wrap it in their Compute (sim/ adds device-model time).
// Ranks below first_worker_rank are servers: they hold no shard and never compute a gradient.
// With modeled numerics no kernels exist: the model is a ModelProfile (a zoo model or a Network's costs),
// the data set may be shapes and counts only, and no parameter, sample or optimizer memory is allocated.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/data/dataset.hpp"
#include "kernels/model/network.hpp"
#include "kernels/model/optimizer.hpp"
#include "kernels/model/zoo_modeled.hpp"

namespace dts::model {

struct TrainerSetup {
  std::string network = "mlp";
  Backend backend = Backend::kOnednn;
  bool real = true;                      // false: modeled numerics, no kernels run
  const data::Dataset* train = nullptr;  // sample shape and classes come from it (modeled: may hold no samples)
  int batch = 32;                        // per worker
  std::uint64_t seed = 42;
  OptimizerConfig optimizer;
  int workers = 1;
  int first_worker_rank = 0;
};

class Trainer {
 public:
  Trainer(const TrainerSetup& setup, int rank);
  std::size_t num_params() const { return num_params_; }
  const std::vector<ParamBlock>& param_blocks() const { return profile_->param_blocks; }
  const std::vector<LayerCost>& cost() const { return profile_->layers; }
  bool has_shard() const { return worker_ >= 0; }
  std::int64_t steps_per_epoch() const;
  // The seed's initial model (identical on every rank). Real numerics only, as forward_backward().
  void init_params(std::span<float> params) const;
  // Next minibatch of the shard: forward, loss, backward; overwrites grads, returns the mean loss.
  // The dropout masks depend on (seed, rank, local step), so reruns draw the same masks.
  float forward_backward(std::span<const float> params, std::span<float> grads);
  void optimizer_step(std::span<float> params, std::span<const float> grads) { optimizer_.step(params, grads); }
  const Optimizer& optimizer() const { return optimizer_; }
  Optimizer& optimizer() { return optimizer_; }
  // GossipGraD's ring sample shuffle, real numerics (empty / a no-op without a stream): the rows the next
  // forward_backward takes, and the replacement of the rows the last one took (data::BatchStream).
  std::vector<std::uint32_t> next_rows();
  void replace_last_rows(std::span<const std::uint32_t> rows);
  // MPCA's recovery (Compute::take_over_shards): the shard becomes this worker's own plus the part-th of
  // `parts` blocks of each lost rank's own shard, from the next epoch on; returns the samples taken over (0
  // without a stream).
  std::size_t take_over_shards(std::span<const int> lost_ranks, int part, int parts);
  // batch x (c*h*w bytes of raw pixels + 4 label bytes); 0 on a server.
  std::uint64_t raw_batch_bytes() const;

 private:
  TrainerSetup setup_;
  int rank_;
  int worker_;                                   // rank - first_worker_rank; negative on a server
  std::unique_ptr<Network> net_;                 // real numerics only
  std::shared_ptr<const ModelProfile> profile_;  // modeled numerics: shared by the process's trainers
  std::size_t num_params_;
  Optimizer optimizer_;
  std::unique_ptr<data::BatchStream> stream_;
  std::vector<float> x_;
  std::vector<std::int32_t> y_;
  std::int64_t steps_ = 0;
};

}  // namespace dts::model
