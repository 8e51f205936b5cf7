// SimWorld: eager sends through courier actors, ordered delivery per stream (source, tag), MPI-style matching.
#include "sim/sim_world.hpp"

#include <algorithm>

#include "algorithms/rules/vector_ops.hpp"
#include "sim/message_costs.hpp"
#include "sim/time_account.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

SimWorld::SimWorld(std::vector<sg4::Host*> hosts, TimeAccount* time_account, MessageCosts* costs)
    : time_account_(time_account), costs_(costs) {
  boxes_.reserve(hosts.size());
  for (sg4::Host* h : hosts) {
    Box& b = boxes_.emplace_back();
    b.host = h;
    b.mutex = sg4::Mutex::create();
    b.cv = sg4::ConditionVariable::create();
  }
}

void SimWorld::Message::own() {
  if (borrowed == nullptr) return;
  data = pool->take(env.count);
  rules::copy(Slice({data.get(), env.count}), ConstSlice({borrowed, env.count}));
  borrowed = nullptr;
}

std::shared_ptr<OpState> SimWorld::post_send(Rank src, Rank dst, Tag tag, ConstSlice data, std::uint64_t bytes,
                                             const SendOptions& opts) {
  DTS_ASSERT(dst >= 0 && dst < size(), "send to a rank outside the world");
  if (boxes_[static_cast<std::size_t>(src)].failed) throw RankGone{};
  // The sender's host-side cost comes first: the send starts once the caller has paid it.
  MessageCharge charge;
  if (costs_ != nullptr) {
    charge = costs_->charge(src, boxes_[static_cast<std::size_t>(src)].sends, host(src), host(dst),
                            static_cast<double>(bytes), opts.blocking);
    const TimeAccount::Scope paying(time_account_, transfer_category(host(src), host(dst)));
    charge.sender.pay();
    if (boxes_[static_cast<std::size_t>(src)].failed) throw RankGone{};
  }
  ++boxes_[static_cast<std::size_t>(src)].sends;
  if (boxes_[static_cast<std::size_t>(dst)].failed) {
    auto op = std::make_shared<OpState>();
    op->owner = src;
    complete_failed(*op, dst);
    return op;
  }
  Box& from = boxes_[static_cast<std::size_t>(src)];
  auto msg = std::make_shared<Message>();
  msg->pool = pool_;
  msg->env = {src, tag, opts.round, data.count};
  msg->seq = from.next_seq_out[matching::stream_of(dst, tag)]++;
  if (OpState* recv = data.data.empty() ? nullptr : early_receive(src, dst, *msg)) {
    rules::copy(recv->buf, data);
    msg->borrowed = recv->buf.data.data();
    msg->early = recv;
    boxes_[static_cast<std::size_t>(dst)].early.push_back(msg);
  } else if (!data.data.empty() && opts.borrow) {
    msg->borrowed = data.data.data();
  } else if (!data.data.empty()) {  // snapshot: the caller may reuse its buffer at once
    msg->data = pool_->take(data.count);
    rules::copy(Slice({msg->data.get(), data.count}), data);
  }
  from.bytes_sent += bytes;
  ++messages_;
  auto op = std::make_shared<OpState>();
  op->owner = src;
  sg4::Host* src_host = host(src);
  sg4::Host* dst_host = host(dst);
  op->trace = msg->trace = time_account_ != nullptr ? time_account_->trace_send(src_host, dst_host) : nullptr;
  // The courier carries the message over the modeled network, then hands it to the destination.
  couriers_.run(src_host, [this, msg, op, src_host, dst_host, dst, bytes, charge] {
    if (src_host != dst_host) {
      const auto flow = [&] { wires_.carry(src_host, dst_host, bytes); };
      charge.stack ? charge.alongside(flow) : flow();
    }
    if (!boxes_[static_cast<std::size_t>(dst)].failed) charge.receiver.pay();  // the receiver's host-side cost
    TimeAccount::arrived(msg->trace.get());
    if (boxes_[static_cast<std::size_t>(dst)].failed) {
      op->source = dst;  // the peer that failed, for the error that names it
      op->status = Status::kPeerFailed;
    } else {
      boxes_[static_cast<std::size_t>(dst)].bytes_received += bytes;
      arrive(dst, msg);
    }
    op->done = true;
    boxes_[static_cast<std::size_t>(op->owner)].cv->notify_all();
  });
  return op;
}

void SimWorld::account(Rank src, Rank dst, std::uint64_t bytes, std::uint64_t messages) {
  boxes_[static_cast<std::size_t>(src)].bytes_sent += bytes;
  boxes_[static_cast<std::size_t>(dst)].bytes_received += bytes;
  messages_ += messages;
}

// The receive `msg` will match on arrival, if that is certain now: every earlier message from src to dst
// still on the way was delivered early (so each completes the receive it holds), and the first posted receive
// that matches and holds none names src alone (no other sender can take it first). Receives that add, or
// whose size differs (an error reported on arrival), are left to arrival.
OpState* SimWorld::early_receive(Rank src, Rank dst, const Message& msg) {
  const Box& box = boxes_[static_cast<std::size_t>(dst)];
  if (box.match.stale(msg.env)) return nullptr;
  const auto on_the_way =
      static_cast<std::ptrdiff_t>(msg.seq - box.order.expected(matching::stream_of(src, msg.env.tag)));
  if (std::count_if(box.early.begin(), box.early.end(),
                    [&](const auto& m) { return m->env.src == src && m->env.tag == msg.env.tag; }) != on_the_way) {
    return nullptr;
  }
  for (const std::shared_ptr<OpState>& op : box.match.posted()) {
    if (!matching::matches(op->want, msg.env) ||
        std::any_of(box.early.begin(), box.early.end(), [&](const auto& m) { return m->early == op.get(); })) {
      continue;
    }
    const bool sure = op->want.srcs.size() == 1 && !op->add && op->buf.count == msg.env.count && !op->buf.data.empty();
    return sure ? op.get() : nullptr;
  }
  return nullptr;
}

void SimWorld::arrive(Rank dst, std::shared_ptr<Message> msg) {
  Box& box = boxes_[static_cast<std::size_t>(dst)];
  const Rank src = msg->env.src;
  if (boxes_[static_cast<std::size_t>(src)].failed) return;  // lost with its sender
  const std::uint64_t seq = msg->seq;
  const matching::Stream stream = matching::stream_of(src, msg->env.tag);
  box.order.arrive(
      stream, seq, std::move(msg),
      [](Message& held) {  // a later message overtook an earlier one on the wire
        if (held.early == nullptr) held.own();
      },
      [&](std::shared_ptr<Message> m) { match_or_queue(box, std::move(m)); });
}

void SimWorld::complete_recv(OpState& op, const Message& msg) {
  if (!op.buf.data.empty() && msg.values() && msg.values() != op.buf.data.data()) {  // not delivered early
    const ConstSlice values({msg.values(), msg.env.count});
    op.add ? rules::axpy(op.buf, 1.0f, values) : rules::copy(op.buf, values);
  }
  op.source = msg.env.src;
  op.trace = msg.trace;
  op.status = Status::kOk;
  op.done = true;
}

void SimWorld::complete_failed(OpState& op, Rank failed) {
  op.source = failed;
  op.status = Status::kPeerFailed;
  op.done = true;
}

void SimWorld::fail(Rank r) {
  DTS_ASSERT(r >= 0 && r < size(), "failure of a rank outside the world");
  boxes_[static_cast<std::size_t>(r)].failed = true;
  for (Box& box : boxes_) {
    // Messages from r delivered early went into receives from r alone, which fail now: both are dropped.
    std::erase_if(box.early, [&](const std::shared_ptr<Message>& m) {
      if (m->env.src != r) return false;
      m->early = nullptr;
      m->borrowed = nullptr;
      return true;
    });
    for (const std::shared_ptr<OpState>& op : box.match.fail(r)) complete_failed(*op, r);
    box.cv->notify_all();
  }
}

void SimWorld::match_or_queue(Box& box, std::shared_ptr<Message> msg) {
  if (msg->early != nullptr) std::erase(box.early, msg);
  const std::shared_ptr<OpState> op = box.match.take_receive(msg->env);
  DTS_ASSERT(msg->early == nullptr || op.get() == msg->early, "a message delivered early matched another receive");
  if (op == nullptr) {
    if (box.match.stale(msg->env)) return;  // a late message of a round given up: dropped
    msg->own();
    box.match.queue(std::move(msg));
    return;
  }
  complete_recv(*op, *msg);
  box.cv->notify_all();
}

std::shared_ptr<OpState> SimWorld::post_recv(Rank me, std::vector<Rank> srcs, Tag tag, Slice buf,
                                             const RecvOptions& opts) {
  Box& box = boxes_[static_cast<std::size_t>(me)];
  if (box.failed) throw RankGone{};
  auto op = std::make_shared<OpState>();
  op->is_recv = true;
  op->owner = me;
  op->want = {std::move(srcs), tag, opts.round, buf.count};
  op->buf = buf;
  op->add = opts.add;
  if (const std::shared_ptr<Message> msg = box.match.post(op)) {
    complete_recv(*op, *msg);
  } else if (const Rank gone = box.match.failed_source(op->want); gone >= 0) {
    box.match.withdraw(*op);
    complete_failed(*op, gone);
  }
  return op;
}

void SimWorld::cancel(OpState& op) {
  if (op.done || !op.is_recv) return;  // a send cannot be recalled: its data is already on the wire
  Box& box = boxes_[static_cast<std::size_t>(op.owner)];
  box.match.withdraw(op);
  std::erase_if(box.early, [&](const std::shared_ptr<Message>& m) {
    if (m->early != &op) return false;
    m->own();  // the message still arrives, to be matched afresh; its values are in op's buffer until now
    m->early = nullptr;
    return true;
  });
  op.status = Status::kCancelled;
  op.done = true;
}

}  // namespace dts::sim
