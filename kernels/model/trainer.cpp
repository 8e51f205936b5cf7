// Trainer: network replica, shard stream and optimizer of one rank.
#include "kernels/model/trainer.hpp"

#include <map>
#include <mutex>
#include <tuple>

#include "core/errors.hpp"
#include "kernels/rng.hpp"

namespace dts::model {
namespace {

// A modeled profile, one per model and data shape for all the trainers of the process: thousands of simulated
// ranks would each build and hold a copy (ResNet-50's: tens of kilobytes; issue 21).
std::shared_ptr<const ModelProfile> shared_profile(const std::string& name, int c, int h, int w, int classes) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, int, int, int, int>, std::weak_ptr<const ModelProfile>> profiles;
  const std::lock_guard<std::mutex> lock(mutex);
  std::weak_ptr<const ModelProfile>& slot = profiles[{name, c, h, w, classes}];
  if (std::shared_ptr<const ModelProfile> p = slot.lock()) return p;
  auto p = std::make_shared<const ModelProfile>(model_profile(name, c, h, w, classes));
  slot = p;
  return p;
}

// Real numerics: the network and its profile; modeled: the profile alone (no kernels, no parameters).
std::shared_ptr<const ModelProfile> make_profile(const TrainerSetup& s, std::unique_ptr<Network>& net) {
  const data::Dataset& d = *s.train;
  if (!s.real) return shared_profile(s.network, d.c, d.h, d.w, d.classes);
  net = make_network(s.network, s.backend, d.c, d.h, d.w, d.classes);
  auto p = std::make_shared<ModelProfile>();
  p->name = s.network;
  p->input = Shape{d.c, d.h, d.w};
  p->outputs = d.classes;
  p->num_params = net->num_params();
  p->param_blocks = net->param_blocks();
  p->layers = net->cost();
  return p;
}

}  // namespace

Trainer::Trainer(const TrainerSetup& setup, int rank)
    : setup_(setup),
      rank_(rank),
      worker_(rank - setup.first_worker_rank),
      profile_(make_profile(setup, net_)),
      num_params_(profile_->num_params),
      optimizer_(setup.optimizer, setup.real ? num_params_ : 0) {
  if (worker_ < 0 || !setup.real) return;
  auto shard = data::shard_indices(setup.train->n, worker_, setup.workers, setup.seed);
  stream_ = std::make_unique<data::BatchStream>(*setup.train, std::move(shard), setup.batch,
                                                setup.seed + static_cast<std::uint64_t>(worker_));
  x_.resize(static_cast<std::size_t>(setup.batch) * setup.train->sample_size());
  y_.resize(static_cast<std::size_t>(setup.batch));
}

std::int64_t Trainer::steps_per_epoch() const {
  if (worker_ < 0) return 0;
  if (stream_) return static_cast<std::int64_t>(stream_->steps_per_epoch());
  // Modeled: the size of this worker's shard as data::shard_indices cuts it, in whole batches.
  const std::int64_t n = setup_.train->n, P = setup_.workers;
  return (n * (worker_ + 1) / P - n * worker_ / P) / setup_.batch;
}

void Trainer::init_params(std::span<float> params) const {
  DTS_ASSERT(net_ != nullptr, "init_params needs real numerics");
  net_->init_params(params, setup_.seed);
}

float Trainer::forward_backward(std::span<const float> params, std::span<float> grads) {
  DTS_ASSERT(stream_ != nullptr, "forward_backward on a rank without a data shard (a server) or with modeled numerics");
  stream_->next(x_, y_);
  Rng drop(setup_.seed, static_cast<std::uint64_t>(rank_), static_cast<std::uint64_t>(steps_++));
  return net_->forward_backward(params, grads, x_, y_, setup_.batch, drop.next_u64());
}

std::vector<std::uint32_t> Trainer::next_rows() { return stream_ ? stream_->peek() : std::vector<std::uint32_t>{}; }

void Trainer::replace_last_rows(std::span<const std::uint32_t> rows) {
  if (stream_) stream_->replace_last(rows);
}

std::size_t Trainer::take_over_shards(std::span<const int> lost_ranks, int part, int parts) {
  if (!stream_) return 0;
  DTS_ASSERT(0 <= part && part < parts,
             "take_over_shards: part " + std::to_string(part) + " of " + std::to_string(parts));
  const int n = setup_.train->n;
  auto rows = data::shard_indices(n, worker_, setup_.workers, setup_.seed);
  const std::size_t own = rows.size();
  for (const int r : lost_ranks) {
    const int w = r - setup_.first_worker_rank;
    DTS_ASSERT(w >= 0 && w < setup_.workers && w != worker_, "take_over_shards: rank " + std::to_string(r));
    const auto theirs = data::shard_indices(n, w, setup_.workers, setup_.seed);
    const auto cut = [&](int k) { return theirs.begin() + static_cast<std::ptrdiff_t>(theirs.size() * k / parts); };
    rows.insert(rows.end(), cut(part), cut(part + 1));
  }
  const std::size_t taken = rows.size() - own;
  stream_->reshard(std::move(rows));
  return taken;
}

std::uint64_t Trainer::raw_batch_bytes() const {
  if (worker_ < 0 || setup_.train == nullptr) return 0;
  return static_cast<std::uint64_t>(setup_.batch) * (setup_.train->sample_size() + sizeof(std::int32_t));
}

}  // namespace dts::model
