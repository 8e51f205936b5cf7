// Trainer: network replica, shard stream and optimizer of one rank.
#include "kernels/model/trainer.hpp"

#include "algorithms/api/errors.hpp"
#include "kernels/rng.hpp"

namespace dts::model {

Trainer::Trainer(const TrainerSetup& setup, int rank)
    : setup_(setup),
      rank_(rank),
      net_(make_network(setup.network, setup.backend, setup.train->c, setup.train->h, setup.train->w,
                        setup.train->classes)),
      num_params_(net_->num_params()),
      optimizer_(setup.optimizer, setup.real ? num_params_ : 0) {
  const int worker = rank - setup.first_worker_rank;
  if (worker < 0) return;
  auto shard = data::shard_indices(setup.train->n, worker, setup.workers, setup.seed);
  stream_ = std::make_unique<data::BatchStream>(*setup.train, std::move(shard), setup.batch,
                                                setup.seed + static_cast<std::uint64_t>(worker));
  if (setup.real) {
    x_.resize(static_cast<std::size_t>(setup.batch) * setup.train->sample_size());
    y_.resize(static_cast<std::size_t>(setup.batch));
  }
}

std::int64_t Trainer::steps_per_epoch() const {
  return stream_ ? static_cast<std::int64_t>(stream_->steps_per_epoch()) : 0;
}

void Trainer::init_params(std::span<float> params) const { net_->init_params(params, setup_.seed); }

float Trainer::forward_backward(std::span<const float> params, std::span<float> grads) {
  DTS_ASSERT(stream_ != nullptr, "forward_backward on a rank without a data shard (a server)");
  stream_->next(x_, y_);
  Rng drop(setup_.seed, static_cast<std::uint64_t>(rank_), static_cast<std::uint64_t>(steps_++));
  return net_->forward_backward(params, grads, x_, y_, setup_.batch, drop.next_u64());
}

}  // namespace dts::model
