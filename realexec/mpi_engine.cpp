// Engine: matching receives against messages drained from MPI with matched probes.
//
// Why matching lives here and not in MPI. MPI matches a receive against one source or MPI_ANY_SOURCE;
// a receive from a set S of ranks (Comm::irecv_any) has three MPI-level translations, none right:
//  (a) MPI_ANY_SOURCE with the tag, then check membership: takes the message of a rank outside S that uses
//      the same tag (the EASGD center and a concurrent collective, say), and a taken message cannot be put back.
//  (b) one MPI_Irecv per member of S, cancel the losers: MPI_Cancel fails on a receive that already matched,
//      so a second message arriving in the window is taken by a loser and must be kept somewhere (a queue of
//      our own after all); and those receives sit ahead of receives posted later for the same source and tag.
//  (c) MPI_Improbe on each member, then MPI_Mrecv: right for the set, but a plain receive posted later for a
//      member takes that member's next message first. The simulator, like MPI, gives a message to the
//      earliest posted receive that matches it, and algorithms may rely on that.
// So every receive goes through the engine: progress() takes each envelope MPI has (MPI_Improbe on any
// source and tag of a private communicator: a matched probe, so no other thread can take the message) and
// gives it to the first posted receive that matches, straight into its buffer (MPI_Imrecv), or stages it in
// an owned buffer until a receive takes it. MPI's non-overtaking rule holds for the probe, so messages of one
// (source, tag) are matched in send order. Costs: one copy for messages that arrive before their receive is
// posted (MPI's eager protocol copies those too), and progress only inside test/wait calls of the rank.
//
// Hangs. A wait that sees no progress for the hang timeout throws, naming what it waited for. To name the
// culprit of a wait on several peers (the EASGD center waits for any worker), the engine notes when each
// peer was last heard from, and which peers have finished the plan: quiesce() replaces a barrier by one
// "finished" notice from every rank to every other on a communicator of its own, received from the start.
//
// Failures (a scenario's, modeled: Open MPI without ULFM cannot survive a process that dies). At its failure a
// rank sends every other a "failed" notice on that communicator, before its "finished": the two travel in
// order. On the notice the others' engines mark it failed in their matcher (the rule is the matcher's, shared
// with the simulator) and complete its receives and sends with kPeerFailed; its messages that arrive after
// the notice are lost with it, taken and dropped. The failed rank stops its algorithm (RankGone) and then only
// drains, in quiesce, so that what its peers had sent it still completes.
#include "realexec/mpi_engine.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "algorithms/rules/vector_ops.hpp"
#include "realexec/mpi_check.hpp"

namespace dts::mpi {
namespace {

float zero_length_dummy = 0;  // MPI wants a valid address even for 0 elements

int mpi_count(std::size_t count) {
  DTS_ASSERT(count <= static_cast<std::size_t>(INT32_MAX), "a message of more than 2^31 floats");
  return static_cast<int>(count);
}

}  // namespace

Engine::Engine(MPI_Comm parent) : fail_at_wtime_(std::numeric_limits<double>::infinity()) {
  DTS_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
  DTS_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  DTS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  DTS_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  int* tag_ub = nullptr;
  int has_tag_ub = 0;
  DTS_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &has_tag_ub));
  if (has_tag_ub) codec_ = TagCodec(*tag_ub);
  DTS_MPI_CHECK(MPI_Comm_dup(parent, &notice_comm_));
  DTS_MPI_CHECK(MPI_Comm_set_errhandler(notice_comm_, MPI_ERRORS_RETURN));
  const auto n = static_cast<std::size_t>(size_);
  last_heard_.assign(n, -std::numeric_limits<double>::infinity());
  finished_.assign(n, false);
  finished_[static_cast<std::size_t>(rank_)] = true;
  peer_failed_.assign(n, false);
  notice_word_.assign(n, -1);
  notice_rx_.assign(n, MPI_REQUEST_NULL);
  finished_tx_.assign(n, MPI_REQUEST_NULL);
  failed_tx_.assign(n, MPI_REQUEST_NULL);
  for (Rank r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto i = static_cast<std::size_t>(r);
    DTS_MPI_CHECK(MPI_Irecv(&notice_word_[i], 1, MPI_INT, r, 0, notice_comm_, &notice_rx_[i]));
  }
  MPI_Comm local = MPI_COMM_NULL;
  DTS_MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  int local_ranks = 1;
  DTS_MPI_CHECK(MPI_Comm_size(local, &local_ranks));
  DTS_MPI_CHECK(MPI_Comm_free(&local));
  spin_s_ = static_cast<unsigned>(local_ranks) <= std::thread::hardware_concurrency() ? kSpinS : 0.0;
}

Engine::~Engine() {
  if (!quiesced_) {
    // Only on a failure path (an exception on its way to the rank boundary, which aborts the job): MPI may
    // still read send snapshots or write staging buffers, so they are leaked rather than freed under it.
    new std::vector<std::shared_ptr<Op>>(std::move(in_flight_));
    new std::vector<std::shared_ptr<Staged>>(std::move(staging_));
    return;  // and the notices' receives stay posted on notice_comm_, which is not freed either
  }
  MPI_Comm_free(&comm_);
  MPI_Comm_free(&notice_comm_);
}

std::shared_ptr<Op> Engine::post_send(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts) {
  DTS_ASSERT(dst >= 0 && dst < size_, "send to a rank outside the world");
  DTS_ASSERT(data.data.size() == data.count, "the MPI backend sends real data: a modeled (empty) buffer of " +
                                                 std::to_string(data.count) + " floats has nothing to send");
  const int mpi_tag = codec_.encode(tag, opts.round);
  const bool borrow = opts.borrow;
  auto op = std::make_shared<Op>();
  if (!borrow) op->payload.assign(data.data.begin(), data.data.end());  // snapshot: the caller may reuse its buffer
  op->want.tag = tag;
  op->want.round = opts.round;
  op->dst = dst;
  std::lock_guard<std::mutex> lock(mu_);
  check_alive_locked();
  if (peer_failed_[static_cast<std::size_t>(dst)]) {  // nothing travels: the simulator's rule (SimWorld::post_send)
    op->payload = {};
    op->source = dst;
    op->status = Status::kPeerFailed;
    op->done = true;
    return op;
  }
  const float* p = data.count == 0 ? &zero_length_dummy : borrow ? data.data.data() : op->payload.data();
  DTS_MPI_CHECK(MPI_Isend(p, mpi_count(data.count), MPI_FLOAT, dst, mpi_tag, comm_, &op->req));
  in_flight_.push_back(op);
  ++sends_pending_;
  // Real bytes: SendOptions::modeled_bytes only charges the simulated network; here the data itself travels.
  bytes_sent_ += sizeof(float) * data.count;
  ++messages_sent_;
  return op;
}

std::shared_ptr<Op> Engine::post_recv(std::vector<Rank> srcs, Tag tag, Slice buf, const RecvOptions& opts) {
  DTS_ASSERT(buf.data.size() == buf.count, "the MPI backend receives real data: a modeled (empty) buffer of " +
                                               std::to_string(buf.count) + " floats cannot hold a message");
  for (const Rank r : srcs) DTS_ASSERT(r >= 0 && r < size_, "receive from a rank outside the world");
  codec_.encode(tag, opts.round);  // refuses what no message can carry
  auto op = std::make_shared<Op>();
  op->is_recv = true;
  op->want = {std::move(srcs), tag, opts.round, buf.count};
  op->buf = buf;
  op->add = opts.add;
  std::lock_guard<std::mutex> lock(mu_);
  check_alive_locked();
  const std::shared_ptr<Staged> s = match_.post(op);
  if (s == nullptr) {
    if (const Rank gone = match_.failed_source(op->want); gone >= 0) {
      match_.withdraw(*op);
      op->source = gone;
      op->status = Status::kPeerFailed;
      op->done = true;
    }
    return op;  // posted, or failed at once
  }
  op->source = s->env.src;
  if (s->arrived) {
    deliver(*op, *s);
  } else {
    s->taker = op;  // progress() delivers it when the data is in
  }
  return op;
}

void Engine::complete_recv(Op& op) {
  if (op.landing) {
    rules::axpy(op.buf, 1.0f, ConstSlice(std::span<const float>(op.landing.get(), op.buf.count)));
    op.landing.reset();
  }
  bytes_received_ += sizeof(float) * op.buf.count;
  op.status = Status::kOk;
  op.done = true;
}

void Engine::deliver(Op& op, const Staged& s) {
  if (op.add && !s.data.empty()) {
    rules::axpy(op.buf, 1.0f, std::span<const float>(s.data));
  } else if (!s.data.empty()) {
    std::memcpy(op.buf.data.data(), s.data.data(), s.data.size() * sizeof(float));
  }
  complete_recv(op);
}

void Engine::progress() {
  // 0. The notices first, so that a failed peer's messages probed below are known to be lost.
  take_notices();
  // 1. Every envelope MPI has: to the earliest posted receive that matches it, or staged.
  for (;;) {
    int flag = 0;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    DTS_MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &msg, &st));
    if (!flag) break;
    int count = 0;
    DTS_MPI_CHECK(MPI_Get_count(&st, MPI_FLOAT, &count));
    DTS_ASSERT(count != MPI_UNDEFINED, "a message that is not a whole number of floats");
    last_heard_[static_cast<std::size_t>(st.MPI_SOURCE)] = MPI_Wtime();
    const auto [tag, round] = codec_.decode(st.MPI_TAG);
    const matching::Envelope env{st.MPI_SOURCE, tag, round, static_cast<std::size_t>(count)};
    // Sent before its sender's failure, arriving after the notice: lost with it (only let land, then dropped).
    const bool lost = peer_failed_[static_cast<std::size_t>(st.MPI_SOURCE)];
    if (const std::shared_ptr<Op> op = lost ? nullptr : match_.take_receive(env)) {
      op->source = env.src;
      if (op->add && count > 0) op->landing.reset(new float[static_cast<std::size_t>(count)]);  // MPI fills it
      float* p = count == 0 ? &zero_length_dummy : op->add ? op->landing.get() : op->buf.data.data();
      DTS_MPI_CHECK(MPI_Imrecv(p, count, MPI_FLOAT, &msg, &op->req));
      in_flight_.push_back(op);
    } else {
      auto s = std::make_shared<Staged>();
      s->env = env;
      s->data.resize(static_cast<std::size_t>(count));
      float* p = count == 0 ? &zero_length_dummy : s->data.data();
      DTS_MPI_CHECK(MPI_Imrecv(p, count, MPI_FLOAT, &msg, &s->req));
      staging_.push_back(s);
      if (!lost && !match_.stale(env)) match_.queue(s);  // a stale one is only let land, then dropped
    }
  }
  // 2. Transfers: sends and matched receives, then staged messages.
  std::erase_if(in_flight_, [this](const std::shared_ptr<Op>& op) {
    int done = 0;
    DTS_MPI_CHECK(MPI_Test(&op->req, &done, MPI_STATUS_IGNORE));
    if (!done) return false;
    if (op->is_recv) {
      complete_recv(*op);
    } else {
      if (peer_failed_[static_cast<std::size_t>(op->dst)]) {  // taken by a failed rank, which drops it
        op->source = op->dst;
        op->status = Status::kPeerFailed;
      }
      op->done = true;
      --sends_pending_;
    }
    return true;
  });
  std::erase_if(staging_, [this](const std::shared_ptr<Staged>& s) {
    int done = 0;
    DTS_MPI_CHECK(MPI_Test(&s->req, &done, MPI_STATUS_IGNORE));
    if (!done) return false;
    s->arrived = true;
    if (s->taker) {
      deliver(*s->taker, *s);
      s->taker.reset();
    }
    return true;
  });
}

void Engine::drop_stale(Tag tag, Round before) {
  std::lock_guard<std::mutex> lock(mu_);
  check_alive_locked();
  match_.drop_stale(tag, before);  // a staged message still landing stays in staging_ until it has
}

bool Engine::test(Op& op) {
  std::lock_guard<std::mutex> lock(mu_);
  check_alive_locked();
  if (!op.done) progress();
  return op.done;
}

bool Engine::poll_op(Op& op) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!op.done) progress();
  return op.done;
}

void Engine::fail_at(double wtime) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_at_wtime_ = wtime;
}

void Engine::check_alive() {
  std::lock_guard<std::mutex> lock(mu_);
  check_alive_locked();
}

void Engine::check_alive_locked() {
  if (!failed_) {
    if (quiescing_ || fail_at_wtime_ == std::numeric_limits<double>::infinity() || MPI_Wtime() < fail_at_wtime_) return;
    failed_ = true;
    for (Rank r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      DTS_MPI_CHECK(
          MPI_Isend(&kFailedNotice, 1, MPI_INT, r, 0, notice_comm_, &failed_tx_[static_cast<std::size_t>(r)]));
    }
  }
  throw RankGone{};
}

void Engine::fail_peer(Rank r) {
  peer_failed_[static_cast<std::size_t>(r)] = true;
  for (const std::shared_ptr<Op>& op : match_.fail(r)) {
    op->source = r;
    op->status = Status::kPeerFailed;
    op->done = true;
  }
}

void Engine::take_notices() {
  for (;;) {
    int index = MPI_UNDEFINED, done = 0;
    DTS_MPI_CHECK(MPI_Testany(size_, notice_rx_.data(), &index, &done, MPI_STATUS_IGNORE));
    if (!done || index == MPI_UNDEFINED) return;
    const auto i = static_cast<std::size_t>(index);
    if (notice_word_[i] == kFailedNotice) {
      fail_peer(index);
      DTS_MPI_CHECK(MPI_Irecv(&notice_word_[i], 1, MPI_INT, index, 0, notice_comm_, &notice_rx_[i]));
    } else {
      DTS_ASSERT(notice_word_[i] == kFinishedNotice, "an unknown notice from rank " + std::to_string(index));
      finished_[i] = true;
    }
  }
}

Status Engine::status(const Op& op) {
  std::lock_guard<std::mutex> lock(mu_);
  return op.status;
}

Rank Engine::source(const Op& op) {
  std::lock_guard<std::mutex> lock(mu_);
  return op.source;
}

void Engine::cancel(Op& op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (op.done || !op.is_recv) return;  // a send cannot be recalled: its data is already with MPI
    if (match_.withdraw(op)) {
      op.status = Status::kCancelled;
      op.done = true;
      return;
    }
  }
  poll_until([&] { return poll_op(op); }, kForever);  // matched: let its data land, it completes as kOk
}

}  // namespace dts::mpi
