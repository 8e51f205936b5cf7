// DimensionLoop: the member's slots and the LineMaster's round control as Reactor handlers.
#include "algorithms/bidmach/dimension_loop.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "algorithms/rules/vector_ops.hpp"

namespace dts::bidmach {
namespace {

enum Control { kStart = 0, kStop = 1 };  // the first float of a LineMaster -> member message
constexpr Round kEveryRound = ~Round{0};

float as_float(std::uint32_t v) {
  DTS_ASSERT(v < (1u << 24), "bidmach: a round number beyond exact floats");
  return static_cast<float>(v);
}

}  // namespace

DimTags dim_tags(int dim) {
  DTS_ASSERT(dim >= 0 && dim < kMaxDims, "bidmach: a dimension beyond the grid's");
  if (dim >= 2) {
    const Tag b = tags::kBidmachHigherDims + 6 * (dim - 2);
    return {{b, b + 1}, b + 2, b + 3, b + 4, b + 5};
  }
  const Tag d = dim;
  return {{tags::kBidmachScatterRow + d, tags::kBidmachReduceRow + d},
          tags::kBidmachStartRow + d,
          tags::kBidmachCompleteRow + d,
          tags::kBidmachDoneRow + d,
          tags::kBidmachConfigRow + d};
}

struct DimensionLoop::Slot {
  std::unique_ptr<collectives::QuorumRound> round;
  std::uint32_t number = 0;
  double fetched_s = 0;
};

DimensionLoop::DimensionLoop(Context& ctx, NodeModel& model, const GridConfig& cfg, int dim, const Line& line)
    : ctx_(ctx),
      model_(model),
      cfg_(cfg),
      tags_(dim_tags(dim)),
      dynamic_(ctx.membership_changes),
      line_(line.members),
      master_(line.master),
      is_master_(ctx.comm.rank() == line.master),
      reactor_(ctx.comm),
      start_in_(2, true),
      complete_in_(1, true),
      done_in_(0, true),
      order_in_(dynamic_ ? order_floats(ctx.comm.size()) : 0, true) {
  // Versions take the top bits of a round id: 12 of the simulator's 32, 4 of MPI's 19 (realexec/tag_codec.hpp).
  const int bits = std::bit_width(ctx.comm.max_round());
  round_bits_ = bits - (bits >= 32 ? 12 : bits / 4);
  DTS_ASSERT((dynamic_ && line_.size() == 0) || (line_.size() >= 2 && line_.index_of(ctx.comm.rank()) >= 0),
             "bidmach: a line without this node's peers");
  slots_.resize(static_cast<std::size_t>(cfg.slots));
}

DimensionLoop::~DimensionLoop() = default;

void DimensionLoop::control(Rank to, Tag tag, std::vector<float> payload) {
  control_out_.push_back(ctx_.comm.isend(to, tag, ConstSlice(std::span<const float>(payload)),
                                         SendOptions{.modeled_bytes = std::nullopt, .borrow = false, .round = base_}));
}

Request DimensionLoop::learner_done() { return ctx_.comm.isend(master_, tags_.done, ConstSlice()); }

void DimensionLoop::run() {
  if (dynamic_) post_order();
  if (active()) post_start();
  if (is_master_) master_begin();
  while (!stopped_ || std::any_of(slots_.begin(), slots_.end(), [](auto& s) { return s != nullptr; }) ||
         !draining_.empty()) {
    DTS_ASSERT(reactor_.pending() > 0, "bidmach: a round waits for nothing");
    const bool between_rounds =
        std::all_of(slots_.begin(), slots_.end(), [](auto& s) { return s == nullptr; }) && draining_.empty();
    while (!reactor_.run_one(between_rounds ? kPatienceSliceS : kForever)) {
    }
    tidy();
  }
  for (Request& r : control_out_) {
    const Status s = r.wait();
    if (s != Status::kOk && s != Status::kPeerFailed) throw CommError(std::string("bidmach: ") + to_string(s));
  }
}

void DimensionLoop::post_start() {
  start_ticket_ = reactor_.post(
      ctx_.comm.irecv(master_, tags_.start, start_in_, {.round = base_}),
      [this](const Comm::Completion& got) {
        start_ticket_ = 0;
        require_ok(got.status, got.source, "bidmach member");
        on_start(got);
      },
      true);
}

void DimensionLoop::on_start(const Comm::Completion&) {
  const auto kind = static_cast<int>(start_in_.data()[0]);
  const auto r = static_cast<std::uint32_t>(start_in_.data()[1]);
  if (kind == kStop) {      // every round has completed everywhere: those not retired here retire as their last
    stop_received_ = true;  // contributions arrive
    stopped_ = !dynamic_ || ended_;
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
  collectives::QuorumBuffers spare = std::move(spare_);
  Vec fetched = collectives::QuorumBuffers::reuse(spare.data, compute.num_params(), compute.real());
  {
    const std::lock_guard<Mutex> hold(*model_.lock);
    rules::copy(fetched, model_.params);
    compute.charge_elementwise(fetched.count(), 2);
    host_copies(1);  // the model, GPU to host
  }
  if (dynamic_ && (r >> round_bits_) != 0) {
    throw CommError("bidmach: more than " + std::to_string((1u << round_bits_) - 1) +
                    " rounds of one line version, more than this backend's round ids carry beside the version");
  }
  auto s = std::make_unique<Slot>();
  s->number = base_ | r;
  s->fetched_s = ctx_.comm.now_s();
  Slot* raw = s.get();
  s->round = std::make_unique<collectives::QuorumRound>(
      ctx_.comm, &compute, line_, tags_.quorum, s->number, cfg_.quorum, std::move(fetched), std::nullopt,
      [this, raw](ConstSlice mean) { finish_round(*raw, mean); }, std::move(spare));
  slots_[r % slots_.size()] = std::move(s);
  begun_ = std::max<Round>(begun_, (base_ | r) + 1);
  raw->round->start(reactor_);
}

// Under the model lock, which the learner takes for each step: while a copy runs the learner's GPU does nothing
// else (a synchronous copy on CUDA's default stream), so the learner waits for it.
void DimensionLoop::host_copies(int models) {
  if (cfg_.host_copy_Bps <= 0) return;
  const double bytes = 4.0 * static_cast<double>(ctx_.compute.num_params()) * models;
  stats_.host_copy_s += bytes / cfg_.host_copy_Bps;
  ctx_.node.sleep_for(bytes / cfg_.host_copy_Bps);
}

void DimensionLoop::finish_round(Slot& slot, ConstSlice mean) {
  stats_.allreduce_s += ctx_.comm.now_s() - slot.fetched_s;
  {
    const std::lock_guard<Mutex> hold(*model_.lock);  // the elastic step into the LIVE model
    rules::scale(model_.params, 1.0f - cfg_.alpha);
    rules::axpy(model_.params, cfg_.alpha, mean);
    ctx_.compute.charge_elementwise(mean.count, 3);
    host_copies(2);  // the model read back to the host, mixed there, written back
  }
  ++stats_.rounds;
  if (!model_.learner_done.load()) ++stats_.rounds_in_training;
  // A round forced by a new version reports to nobody: its LineMaster has moved on too.
  if (slot.number >> round_bits_ == version_) control(master_, tags_.complete, {as_float(slot.number - base_)});
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
  std::erase_if(draining_, [this](auto& s) {
    if (!s->round->drained()) return false;
    spare_ = s->round->take_buffers();
    return true;
  });
  std::erase_if(control_out_, [](Request& r) { return r.test() && (r.wait(0), true); });
  if (oldest > floor_) {
    floor_ = oldest;
    ctx_.comm.drop_stale(tags_.quorum.scatter, floor_);
    ctx_.comm.drop_stale(tags_.quorum.reduce, floor_);
  }
}

void DimensionLoop::give_up_below(Round floor) {
  begun_ = std::max(begun_, floor);
  tidy();
  for (Tag t : {tags_.start, tags_.complete, tags_.done}) ctx_.comm.drop_stale(t, floor);
}

void DimensionLoop::master_begin() {
  if (cfg_.startup_poll_s > 0 && cfg_.train) {
    while (model_.learner_steps.load() == 0) ctx_.node.sleep_for(cfg_.startup_poll_s);
  }
  post_complete();
  if (!dynamic_) post_done();
  start_all(0);
}

void DimensionLoop::start_all(std::uint32_t r) {
  current_ = r;
  started_ = r + 1;
  completions_.resize(started_, 0);
  for (Rank m : line_.members()) control(m, tags_.start, {static_cast<float>(kStart), as_float(r)});
}

void DimensionLoop::post_order() {
  reactor_.post(
      ctx_.comm.irecv(0, tags_.config, order_in_),
      [this](const Comm::Completion& got) {
        require_ok(got.status, got.source, "bidmach node");
        on_order(decode_order(order_in_));
      },
      true);
}

void DimensionLoop::on_order(const LineOrder& order) {
  switch (order.kind) {
    case LineOrder::kConfig:
      adopt(order.line, order.version);
      post_order();
      return;
    case LineOrder::kOut:  // this node leaves: whatever comes for this dimension from now on is dropped
      adopt({}, order.version);
      give_up_below(kEveryRound);
      stopped_ = true;
      return;
    case LineOrder::kEnd:
      ended_ = true;
      stopped_ = !active() || stop_received_;
      if (is_master_) maybe_stop();
      return;
  }
}

void DimensionLoop::adopt(const Line& line, Round version) {
  DTS_ASSERT(version > version_, "bidmach: a line version out of order");
  if (version >> (32 - round_bits_) != 0 || (version << round_bits_) > ctx_.comm.max_round()) {
    throw CommError("bidmach: the grid changed " + std::to_string(version) +
                    " times, more than this backend's round ids carry beside a line's rounds");
  }
  version_ = version;
  base_ = version << round_bits_;
  for (auto& slot : slots_) {  // FORCE_COMPLETE of the old version's rounds
    if (slot == nullptr) continue;
    slot->round->force();
    ++stats_.forced;
    ++stats_.relayout_forced;
  }
  for (Reactor::Ticket* t : {&start_ticket_, &complete_ticket_, &done_ticket_}) {
    if (*t != 0) reactor_.cancel(*t);
    *t = 0;
  }
  give_up_below(base_);
  line_ = Group(line.members);
  master_ = line.master;
  is_master_ = active() && ctx_.comm.rank() == master_;
  current_ = started_ = 0;
  completions_.clear();
  stop_sent_ = false;
  if (!active()) return;
  post_start();
  if (is_master_) {
    post_complete();
    start_all(0);
  }
}

void DimensionLoop::post_complete() {
  complete_ticket_ = reactor_.post(
      ctx_.comm.irecv_any(line_.members(), tags_.complete, complete_in_, {.round = base_}),
      [this](const Comm::Completion& got) {
        complete_ticket_ = 0;
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
  done_ticket_ = reactor_.post(
      ctx_.comm.irecv_any(line_.members(), tags_.done, done_in_),
      [this](const Comm::Completion& got) {
        done_ticket_ = 0;
        require_ok(got.status, got.source, "bidmach line master");
        ++members_done_;
        maybe_stop();
        if (members_done_ < line_.size()) post_done();
      },
      true);
}

// Once every learner of the line is done and every started round has completed everywhere.
// With a changing membership, until the GridMaster's End.
bool DimensionLoop::more_rounds() const {
  if (cfg_.max_rounds > 0) return started_ < cfg_.max_rounds;
  return dynamic_ ? !ended_ : members_done_ < line_.size();
}

void DimensionLoop::maybe_stop() {
  const int p = line_.size();
  if (stop_sent_ || (dynamic_ ? !ended_ : members_done_ < p) || more_rounds()) return;
  for (int c : completions_) {
    if (c < p) return;
  }
  stop_sent_ = true;
  for (Rank m : line_.members()) control(m, tags_.start, {static_cast<float>(kStop), 0.0f});
}

}  // namespace dts::bidmach
