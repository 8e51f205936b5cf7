// QuorumRound: the round as handlers on a Reactor, one pending receive per member and direction, each
// reposted for the member's next chunk (a pair's messages of one tag and round arrive in send order).
#include "algorithms/collectives/quorum_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <utility>

#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {
namespace {

std::size_t quorum(double fraction, std::size_t of) {
  if (of == 0) return 0;
  const auto q = static_cast<std::size_t>(std::floor(fraction * static_cast<double>(of) + 1e-9));
  return std::clamp<std::size_t>(q, 1, std::max<std::size_t>(of, 1));
}

}  // namespace

Chunk QuorumRound::block(std::size_t n, int p, int b) {
  const std::size_t size = (n + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p);
  const std::size_t begin = std::min(n, size * static_cast<std::size_t>(b));
  return {begin, std::min(n, begin + size) - begin};
}

QuorumRound::QuorumRound(Comm& comm, Compute* compute, const Group& line, QuorumTags tags, Round round,
                         const QuorumConfig& cfg, Vec data, std::optional<std::uint64_t> modeled_bytes,
                         Complete on_complete, QuorumBuffers spare)
    : comm_(comm),
      compute_(compute),
      line_(line),
      tags_(tags),
      round_(round),
      cfg_(cfg),
      data_(std::move(data)),
      modeled_bytes_(modeled_bytes),
      on_complete_(std::move(on_complete)),
      p_(line.size()),
      me_(line.index_of(comm.rank())),
      n_(data_.count()) {
  DTS_ASSERT(me_ >= 0, "quorum allreduce: the caller is not a member of the line");
  DTS_ASSERT(cfg.chunk_floats > 0, "quorum allreduce: chunks of no floats");
  const bool real = data_.real();
  const std::size_t mine = block(n_, p_, me_).count;
  // Every float a round reads from these it has written first (a chunk's counted contributions; the output's
  // chunks, each reduced, received or taken from my own copy), so an earlier round's values do no harm.
  contributions_ = QuorumBuffers::reuse(spare.contributions, mine * static_cast<std::size_t>(p_), real);
  out_ = QuorumBuffers::reuse(spare.out, n_, real);
  for (int b = 0; b < p_; ++b) counts_.chunks += chunks(b);
  need_reduce_ = quorum(cfg.reduce, static_cast<std::size_t>(p_));
  need_complete_ = quorum(cfg.complete, counts_.chunks);
  reduced_.assign(chunks(me_), false);
  if (CollectiveEngine* engine = comm.collective_engine(); engine != nullptr && !real) {
    LineRoundSpec spec{.line = &line_,
                       .index = me_,
                       .tag = tags.scatter,
                       .round = round,
                       .block_bytes = {},
                       .block_chunks = {},
                       .need_reduce = need_reduce_,
                       .need_complete = need_complete_};
    for (int b = 0; b < p_; ++b) {
      const std::size_t count = block(n_, p_, b).count;
      spec.block_bytes.push_back(charged_bytes(count).value_or(sizeof(float) * count));
      spec.block_chunks.push_back(chunks(b));
    }
    part_ = engine->line_round(spec);
  }
  if (part_ != nullptr) return;  // the per-chunk state below is the messages'
  scatter_in_.resize(static_cast<std::size_t>(p_));
  reduce_in_.resize(static_cast<std::size_t>(p_));
  for (int k = 0; k < p_; ++k) {
    scatter_in_[static_cast<std::size_t>(k)].resize(chunks(me_));
    reduce_in_[static_cast<std::size_t>(k)].resize(chunks(k));
  }
  have_.assign(chunks(me_), 1);  // my own contribution
}

std::optional<std::uint64_t> QuorumRound::charged_bytes(std::size_t count) const {
  if (!modeled_bytes_) return std::nullopt;
  return n_ == 0 ? *modeled_bytes_ : *modeled_bytes_ * count / n_;
}

std::size_t QuorumRound::chunks(int b) const {
  return (block(n_, p_, b).count + cfg_.chunk_floats - 1) / cfg_.chunk_floats;
}

Chunk QuorumRound::chunk(int b, std::size_t c) const {
  const Chunk blk = block(n_, p_, b);
  const std::size_t begin = c * cfg_.chunk_floats;
  return {blk.offset + begin, std::min(cfg_.chunk_floats, blk.count - begin)};
}

void QuorumRound::send(int member, Tag tag, ConstSlice part) {
  outbox_[static_cast<std::size_t>(member)].push_back({tag, part});
  ++sending_;
  pump(member);
}

// A member's messages to one peer go out in order, at most kWindow in flight (a TCP connection between the two
// nodes, as Akka's remoting has): the network sees a few flows per pair, not one per chunk.
void QuorumRound::pump(int member) {
  const auto m = static_cast<std::size_t>(member);
  while (in_flight_[m] < kWindow && !outbox_[m].empty()) {
    const auto [tag, part] = outbox_[m].front();
    outbox_[m].pop_front();
    SendOptions o{.modeled_bytes = std::nullopt, .borrow = true, .round = round_};
    o.modeled_bytes = charged_bytes(part.count);
    ++in_flight_[m];
    reactor_->post(comm_.isend(line_.world_rank(member), tag, part, o), [this, member](const Comm::Completion& got) {
      if (got.status != Status::kOk && got.status != Status::kPeerFailed)
        throw CommError(std::string("quorum allreduce: ") + to_string(got.status));
      auto& outbox = outbox_[static_cast<std::size_t>(member)];
      --in_flight_[static_cast<std::size_t>(member)];
      --sending_;
      if (got.status == Status::kPeerFailed) {  // nobody to send to
        sending_ -= outbox.size();
        outbox.clear();
      }
      pump(member);
    });
  }
}

void QuorumRound::start(Reactor& reactor) {
  reactor_ = &reactor;
  if (part_ != nullptr) return start_flows();
  outbox_.resize(static_cast<std::size_t>(p_));
  in_flight_.assign(static_cast<std::size_t>(p_), 0);
  for (int k = 1; k < p_; ++k) {  // the staggered order: not everyone at one peer first
    const int dst = (me_ + k) % p_;
    for (std::size_t c = 0; c < chunks(dst); ++c) {
      const Chunk ch = chunk(dst, c);
      send(dst, tags_.scatter, ConstSlice(data_).sub(ch.offset, ch.count));
    }
  }
  for (int k = 0; k < p_; ++k) {
    if (k == me_) continue;
    post_scatter(k);
    post_reduce(k);
  }
  for (std::size_t c = 0; c < reduced_.size(); ++c) {  // a quorum of one: my own contribution suffices
    if (!reduced_[c] && static_cast<std::size_t>(have_[c]) >= need_reduce_) reduce(c);
  }
  check_complete();
  check_retired();
}

// Receives from one member are posted kWindow ahead, chunk after chunk: the pair's messages of one tag and round
// match them in the order they were sent.
void QuorumRound::post_scatter(int k) {
  Inbound& in = scatter_in_[static_cast<std::size_t>(k)];
  const std::size_t mine_offset = block(n_, p_, me_).offset, mine = block(n_, p_, me_).count;
  while (!retired_ && !in.failed && in.outstanding < kWindow && in.posted < chunks(me_)) {
    const std::size_t c = in.posted++;
    const Chunk ch = chunk(me_, c);
    const Slice into =
        Slice(contributions_).sub(static_cast<std::size_t>(k) * mine + ch.offset - mine_offset, ch.count);
    ++in.outstanding;
    in.tickets[c] = reactor_->post(comm_.irecv(line_.world_rank(k), tags_.scatter, into, RecvOptions{.round = round_}),
                                   [this, k, c](const Comm::Completion& got) { on_scatter(k, c, got); });
  }
}

void QuorumRound::post_reduce(int k) {
  Inbound& in = reduce_in_[static_cast<std::size_t>(k)];
  while (!completed_ && !in.failed && in.outstanding < kWindow && in.posted < chunks(k)) {
    const std::size_t c = in.posted++;
    const Chunk ch = chunk(k, c);
    ++in.outstanding;
    in.tickets[c] = reactor_->post(comm_.irecv(line_.world_rank(k), tags_.reduce, Slice(out_).sub(ch.offset, ch.count),
                                               RecvOptions{.round = round_}),
                                   [this, k, c](const Comm::Completion& got) { on_reduce(k, c, got); });
  }
}

void QuorumRound::on_scatter(int k, std::size_t c, const Comm::Completion& got) {
  Inbound& in = scatter_in_[static_cast<std::size_t>(k)];
  in.tickets[c] = 0;
  --in.outstanding;
  if (got.status == Status::kPeerFailed) {  // nothing more from k: its chunks wait for force()
    in.failed = true;
    return;
  }
  require_ok(got.status, got.source, "quorum allreduce");
  in.got[c] = true;
  // Counted in chunk order, whatever order the reactor ran the handlers in: then every member that has
  // contributed chunk c + 1 has contributed chunk c, my chunks reach their quorum in order, and my reduced chunks
  // go out in the order the members' receives for them were posted.
  while (in.counted < in.got.size() && in.got[in.counted]) {
    const std::size_t next = in.counted++;
    if (!reduced_[next] && static_cast<std::size_t>(++have_[next]) >= need_reduce_) reduce(next);
  }
  post_scatter(k);
  check_complete();
  check_retired();
}

void QuorumRound::on_reduce(int k, std::size_t c, const Comm::Completion& got) {
  Inbound& in = reduce_in_[static_cast<std::size_t>(k)];
  in.tickets[c] = 0;
  --in.outstanding;
  if (got.status == Status::kPeerFailed) {  // k's block stays missing
    in.failed = true;
    return;
  }
  require_ok(got.status, got.source, "quorum allreduce");
  in.got[c] = true;
  ++received_;
  post_reduce(k);
  check_complete();
  check_retired();
}

void QuorumRound::reduce(std::size_t c) {
  const Chunk ch = chunk(me_, c);
  const std::size_t mine_offset = block(n_, p_, me_).offset, mine = block(n_, p_, me_).count;
  const Slice mean = Slice(out_).sub(ch.offset, ch.count);
  bool first = true;
  for (int k = 0; k < p_; ++k) {  // the contributions held, in member order
    const auto kk = static_cast<std::size_t>(k);
    if (k != me_ && scatter_in_[kk].counted <= c) continue;  // as have_ counts
    const ConstSlice part = k == me_ ? ConstSlice(data_).sub(ch.offset, ch.count)
                                     : ConstSlice(contributions_).sub(kk * mine + ch.offset - mine_offset, ch.count);
    if (first) {
      rules::copy(mean, part);
    } else {
      rules::axpy(mean, 1.0f, part);
    }
    first = false;
  }
  const int held = have_[c];
  rules::scale(mean, 1.0f / static_cast<float>(held));
  if (compute_ != nullptr) {
    if (held > 1) compute_->charge_reduce(ch.count * static_cast<std::size_t>(held - 1), 3);
    compute_->charge_reduce(ch.count, 2);
  }
  reduced_[c] = true;
  ++mine_reduced_;
  if (held < p_) ++counts_.short_reduced;
  for (int k = 1; k < p_; ++k) send((me_ + k) % p_, tags_.reduce, mean);
  if (!completed_) ++received_;
}

void QuorumRound::check_complete() {
  if (!completed_ && received_ >= need_complete_) complete();
}

void QuorumRound::complete() {
  completed_ = true;
  cancel_receives(reduce_in_);
  for (int b = 0; b < p_; ++b) {  // what never arrived: my own copy
    const auto bb = static_cast<std::size_t>(b);
    for (std::size_t c = 0; c < chunks(b); ++c) {
      if (b == me_ ? reduced_[c] : reduce_in_[bb].got[c]) continue;
      const Chunk ch = chunk(b, c);
      rules::copy(Slice(out_).sub(ch.offset, ch.count), ConstSlice(data_).sub(ch.offset, ch.count));
      ++counts_.missing;
    }
  }
  on_complete_(out_);
}

void QuorumRound::check_retired() {
  if (retired_ || !completed_ || mine_reduced_ < reduced_.size()) return;
  retired_ = true;
  cancel_receives(scatter_in_);
}

void QuorumRound::force() {
  if (retired_) return;
  counts_.forced = true;
  if (part_ != nullptr) {
    if (reduce_due_ != 0) reactor_->cancel(std::exchange(reduce_due_, 0));
    while (reduced_group_ < part_->groups()) reduce_group(static_cast<std::size_t>(p_));
    if (complete_due_ != 0) {
      reactor_->cancel(std::exchange(complete_due_, 0));
      complete_flows(counts_.chunks);
    }
    check_retired();
    return;
  }
  for (std::size_t c = 0; c < reduced_.size(); ++c) {
    if (!reduced_[c]) reduce(c);
  }
  if (!completed_) complete();
  check_retired();
}

void QuorumRound::cancel_receives(std::vector<Inbound>& from) {
  for (Inbound& in : from) {
    for (Reactor::Ticket& t : in.tickets) {
      if (t != 0) reactor_->cancel(t);
      t = 0;
    }
    in.outstanding = 0;
  }
}

bool QuorumRound::drained() const { return sending_ == 0; }

QuorumBuffers QuorumRound::take_buffers() {
  DTS_ASSERT(retired_ && drained(), "quorum allreduce: buffers taken from a round still running");
  return {std::move(data_), std::move(contributions_), std::move(out_)};
}

QuorumCounts quorum_allreduce(Comm& comm, Compute* compute, const Group& line, Slice data, QuorumTags tags, Round round,
                              const QuorumConfig& cfg, std::optional<std::uint64_t> modeled_bytes,
                              QuorumBuffers* buffers) {
  QuorumBuffers spare = buffers != nullptr ? std::move(*buffers) : QuorumBuffers{};
  Vec mine = QuorumBuffers::reuse(spare.data, data.count, data.real());
  rules::copy(mine, data);
  Reactor reactor(comm);
  QuorumRound r(
      comm, compute, line, tags, round, cfg, std::move(mine), modeled_bytes,
      [data](ConstSlice out) { rules::copy(data, out); }, std::move(spare));
  r.start(reactor);
  while (!r.retired() || !r.drained()) reactor.run_one();
  if (buffers != nullptr) *buffers = r.take_buffers();
  comm.drop_stale(tags.scatter, round + 1);  // late contributions of members slower than the quorum
  comm.drop_stale(tags.reduce, round + 1);
  return r.counts();
}

}  // namespace dts::collectives
