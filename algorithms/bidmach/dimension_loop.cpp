// DimensionLoop: the member's slots and the LineMaster's round control as Reactor handlers.
#include "algorithms/bidmach/dimension_loop.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "algorithms/rules/vector_ops.hpp"

namespace dts::bidmach {
namespace {

enum Control { kStart = 0, kStop = 1 };  // the first float of a LineMaster -> member message

float as_float(std::uint32_t v) {
  DTS_ASSERT(v < (1u << 24), "bidmach: a round number beyond exact floats");
  return static_cast<float>(v);
}

}  // namespace

DimTags dim_tags(int dim) {
  const Tag d = dim;
  return {{tags::kBidmachScatterRow + d, tags::kBidmachReduceRow + d},
          tags::kBidmachStartRow + d,
          tags::kBidmachCompleteRow + d,
          tags::kBidmachDoneRow + d};
}

struct DimensionLoop::Slot {
  std::unique_ptr<collectives::QuorumRound> round;
  std::uint32_t number = 0;
  double fetched_s = 0;
};

DimensionLoop::DimensionLoop(Context& ctx, NodeModel& model, const GridConfig& cfg, int dim, Group line, Rank master)
    : ctx_(ctx),
      model_(model),
      cfg_(cfg),
      tags_(dim_tags(dim)),
      line_(std::move(line)),
      master_(master),
      is_master_(ctx.comm.rank() == master),
      reactor_(ctx.comm),
      start_in_(2, true),
      complete_in_(1, true),
      done_in_(0, true) {
  DTS_ASSERT(line_.size() >= 2 && line_.index_of(ctx.comm.rank()) >= 0, "bidmach: a line without this node's peers");
  slots_.resize(static_cast<std::size_t>(cfg.slots));
}

DimensionLoop::~DimensionLoop() = default;

void DimensionLoop::control(Rank to, Tag tag, std::vector<float> payload) {
  control_out_.push_back(ctx_.comm.isend(to, tag, ConstSlice(std::span<const float>(payload))));
}

Request DimensionLoop::learner_done() { return ctx_.comm.isend(master_, tags_.done, ConstSlice()); }

void DimensionLoop::run() {
  post_start();
  if (is_master_) master_begin();
  while (!stopped_ || std::any_of(slots_.begin(), slots_.end(), [](auto& s) { return s != nullptr; }) ||
         !draining_.empty()) {
    DTS_ASSERT(reactor_.pending() > 0, "bidmach: a round waits for nothing");
    reactor_.run_one();
    tidy();
  }
  for (Request& r : control_out_) {
    const Status s = r.wait();
    if (s != Status::kOk && s != Status::kPeerFailed) throw CommError(std::string("bidmach: ") + to_string(s));
  }
}

void DimensionLoop::post_start() {
  reactor_.post(
      ctx_.comm.irecv(master_, tags_.start, start_in_),
      [this](const Comm::Completion& got) {
        require_ok(got.status, got.source, "bidmach member");
        on_start(got);
      },
      true);
}

void DimensionLoop::on_start(const Comm::Completion&) {
  const auto kind = static_cast<int>(start_in_.data()[0]);
  const auto r = static_cast<std::uint32_t>(start_in_.data()[1]);
  if (kind == kStop) {  // every round has completed everywhere: those not retired here retire as their last
    stopped_ = true;    // contributions arrive
    return;
  }
  post_start();
  begin_round(r);
}

void DimensionLoop::begin_round(std::uint32_t r) {
  std::unique_ptr<Slot>& slot = slots_[r % slots_.size()];
  if (slot != nullptr) {  // the round that had this slot is still unfinished: FORCE_COMPLETE
    slot->round->force();
    ++stats_.forced;
    tidy();
  }
  Compute& compute = ctx_.compute;
  Vec fetched = compute.make_vec();
  {
    const std::lock_guard<Mutex> hold(*model_.lock);
    rules::copy(fetched, model_.params);
    compute.charge_elementwise(fetched.count(), 2);
  }
  auto s = std::make_unique<Slot>();
  s->number = r;
  s->fetched_s = ctx_.comm.now_s();
  Slot* raw = s.get();
  s->round = std::make_unique<collectives::QuorumRound>(ctx_.comm, &compute, line_, tags_.quorum, r, cfg_.quorum,
                                                        std::move(fetched), std::nullopt,
                                                        [this, raw](ConstSlice mean) { finish_round(*raw, mean); });
  slots_[r % slots_.size()] = std::move(s);
  begun_ = std::max<Round>(begun_, r + 1);
  raw->round->start(reactor_);
}

void DimensionLoop::finish_round(Slot& slot, ConstSlice mean) {
  stats_.allreduce_s += ctx_.comm.now_s() - slot.fetched_s;
  {
    const std::lock_guard<Mutex> hold(*model_.lock);  // the elastic step into the LIVE model
    rules::scale(model_.params, 1.0f - cfg_.alpha);
    rules::axpy(model_.params, cfg_.alpha, mean);
    ctx_.compute.charge_elementwise(mean.count, 3);
  }
  ++stats_.rounds;
  if (!model_.learner_done.load()) ++stats_.rounds_in_training;
  control(master_, tags_.complete, {as_float(slot.number)});
}

// Retired rounds leave their slot and are destroyed once their sends are done; the rounds below the oldest one
// still running here are given up (their late messages dropped).
void DimensionLoop::tidy() {
  Round oldest = begun_;
  for (auto& s : slots_) {
    if (s == nullptr) continue;
    if (!s->round->retired()) {
      oldest = std::min<Round>(oldest, s->number);
      continue;
    }
    const collectives::QuorumCounts& c = s->round->counts();
    stats_.short_reduced += static_cast<std::int64_t>(c.short_reduced);
    stats_.missing += static_cast<std::int64_t>(c.missing);
    draining_.push_back(std::move(s));
  }
  std::erase_if(draining_, [](auto& s) { return s->round->drained(); });
  std::erase_if(control_out_, [](Request& r) { return r.test() && (r.wait(0), true); });
  if (oldest > floor_) {
    floor_ = oldest;
    ctx_.comm.drop_stale(tags_.quorum.scatter, floor_);
    ctx_.comm.drop_stale(tags_.quorum.reduce, floor_);
  }
}

void DimensionLoop::master_begin() {
  if (cfg_.startup_poll_s > 0 && cfg_.train) {
    while (model_.learner_steps.load() == 0) ctx_.node.sleep_for(cfg_.startup_poll_s);
  }
  post_complete();
  post_done();
  start_all(0);
}

void DimensionLoop::start_all(std::uint32_t r) {
  current_ = r;
  started_ = r + 1;
  completions_.resize(started_, 0);
  for (Rank m : line_.members()) control(m, tags_.start, {static_cast<float>(kStart), as_float(r)});
}

void DimensionLoop::post_complete() {
  reactor_.post(
      ctx_.comm.irecv_any(line_.members(), tags_.complete, complete_in_),
      [this](const Comm::Completion& got) {
        require_ok(got.status, got.source, "bidmach line master");
        const auto r = static_cast<std::uint32_t>(complete_in_.data()[0]);
        DTS_ASSERT(r < started_, "bidmach: a completion of a round never started");
        const int p = line_.size();
        const int need = std::max(1, static_cast<int>(std::ceil(cfg_.round_quorum * p - 1e-9)));
        ++completions_[r];
        if (r == current_ && completions_[r] == need && more_rounds()) start_all(r + 1);
        maybe_stop();
        if (!stop_sent_) post_complete();
      },
      true);
}

void DimensionLoop::post_done() {
  reactor_.post(
      ctx_.comm.irecv_any(line_.members(), tags_.done, done_in_),
      [this](const Comm::Completion& got) {
        require_ok(got.status, got.source, "bidmach line master");
        ++members_done_;
        maybe_stop();
        if (members_done_ < line_.size()) post_done();
      },
      true);
}

// Once every learner of the line is done and every started round has completed everywhere.
bool DimensionLoop::more_rounds() const {
  if (cfg_.max_rounds > 0) return started_ < cfg_.max_rounds;
  return members_done_ < line_.size();
}

void DimensionLoop::maybe_stop() {
  const int p = line_.size();
  if (stop_sent_ || members_done_ < p || more_rounds()) return;
  for (int c : completions_) {
    if (c < p) return;
  }
  stop_sent_ = true;
  for (Rank m : line_.members()) control(m, tags_.start, {static_cast<float>(kStop), 0.0f});
}

}  // namespace dts::bidmach
