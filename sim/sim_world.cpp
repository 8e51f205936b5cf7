// SimWorld: eager sends through courier actors, ordered delivery per pair, MPI-style matching.
#include "sim/sim_world.hpp"

#include <algorithm>

#include "algorithms/rules/vector_ops.hpp"
#include "sim/actor_stack.hpp"
#include "sim/time_account.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

SimWorld::SimWorld(std::vector<sg4::Host*> hosts, TimeAccount* time_account)
    : boxes_(hosts.size()), time_account_(time_account) {
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    Box& b = boxes_[i];
    b.host = hosts[i];
    b.mutex = sg4::Mutex::create();
    b.cv = sg4::ConditionVariable::create();
    b.next_seq_out.assign(hosts.size(), 0);
    b.next_seq_in.assign(hosts.size(), 0);
  }
}

void SimWorld::Message::own() {
  if (borrowed == nullptr) return;
  data = pool->take(count);
  rules::copy(Slice({data.get(), count}), ConstSlice({borrowed, count}));
  borrowed = nullptr;
}

std::shared_ptr<OpState> SimWorld::post_send(Rank src, Rank dst, Tag tag, ConstSlice data, std::uint64_t bytes,
                                             bool borrow) {
  DTS_ASSERT(dst >= 0 && dst < size(), "send to a rank outside the world");
  Box& from = boxes_[static_cast<std::size_t>(src)];
  auto msg = std::make_shared<Message>();
  msg->pool = pool_;
  msg->src = src;
  msg->tag = tag;
  msg->count = data.count;
  msg->seq = from.next_seq_out[static_cast<std::size_t>(dst)]++;
  if (OpState* recv = data.data.empty() ? nullptr : early_receive(src, dst, *msg)) {
    rules::copy(recv->buf, data);
    msg->borrowed = recv->buf.data.data();
    msg->early = recv;
    boxes_[static_cast<std::size_t>(dst)].early.push_back(msg);
  } else if (!data.data.empty() && borrow) {
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
  start_actor("msg", src_host, kCourierStackKiB, [this, msg, op, src_host, dst_host, dst, bytes] {
    if (src_host != dst_host) sg4::Comm::sendto(src_host, dst_host, bytes);
    TimeAccount::arrived(msg->trace.get());
    boxes_[static_cast<std::size_t>(dst)].bytes_received += bytes;
    arrive(dst, msg);
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
  const auto on_the_way = static_cast<std::ptrdiff_t>(msg.seq - box.next_seq_in[static_cast<std::size_t>(src)]);
  if (std::count_if(box.early.begin(), box.early.end(), [&](const auto& m) { return m->src == src; }) != on_the_way) {
    return nullptr;
  }
  for (const std::shared_ptr<OpState>& op : box.posted) {
    if (!matches(*op, msg) ||
        std::any_of(box.early.begin(), box.early.end(), [&](const auto& m) { return m->early == op.get(); })) {
      continue;
    }
    const bool sure = op->srcs.size() == 1 && !op->add && op->buf.count == msg.count && !op->buf.data.empty();
    return sure ? op.get() : nullptr;
  }
  return nullptr;
}

void SimWorld::arrive(Rank dst, std::shared_ptr<Message> msg) {
  Box& box = boxes_[static_cast<std::size_t>(dst)];
  auto& expected = box.next_seq_in[static_cast<std::size_t>(msg->src)];
  if (msg->seq != expected) {  // a later message overtook an earlier one on the wire: hold it
    if (msg->early == nullptr) msg->own();
    box.held.emplace(std::make_pair(msg->src, msg->seq), std::move(msg));
    return;
  }
  const Rank src = msg->src;
  match_or_queue(box, std::move(msg));
  ++expected;
  for (auto it = box.held.find({src, expected}); it != box.held.end(); it = box.held.find({src, expected})) {
    match_or_queue(box, std::move(it->second));
    box.held.erase(it);
    ++expected;
  }
}

bool SimWorld::matches(const OpState& op, const Message& msg) {
  return op.tag == msg.tag && std::find(op.srcs.begin(), op.srcs.end(), msg.src) != op.srcs.end();
}

void SimWorld::complete_recv(OpState& op, const Message& msg) {
  DTS_ASSERT(op.buf.count == msg.count, "receive buffer of " + std::to_string(op.buf.count) +
                                            " floats for a message of " + std::to_string(msg.count) + " (tag " +
                                            std::to_string(msg.tag) + ")");
  if (!op.buf.data.empty() && msg.values() && msg.values() != op.buf.data.data()) {  // not delivered early
    const ConstSlice values({msg.values(), msg.count});
    op.add ? rules::axpy(op.buf, 1.0f, values) : rules::copy(op.buf, values);
  }
  op.source = msg.src;
  op.trace = msg.trace;
  op.status = Status::kOk;
  op.done = true;
}

void SimWorld::match_or_queue(Box& box, std::shared_ptr<Message> msg) {
  if (msg->early != nullptr) std::erase(box.early, msg);
  const auto it = std::find_if(box.posted.begin(), box.posted.end(),
                               [&](const std::shared_ptr<OpState>& op) { return matches(*op, *msg); });
  DTS_ASSERT(msg->early == nullptr || (it != box.posted.end() && it->get() == msg->early),
             "a message delivered early matched another receive");
  if (it == box.posted.end()) {
    msg->own();
    box.unexpected.push_back(std::move(msg));
    return;
  }
  complete_recv(**it, *msg);
  box.posted.erase(it);
  box.cv->notify_all();
}

std::shared_ptr<OpState> SimWorld::post_recv(Rank me, std::vector<Rank> srcs, Tag tag, Slice buf, bool add) {
  Box& box = boxes_[static_cast<std::size_t>(me)];
  auto op = std::make_shared<OpState>();
  op->is_recv = true;
  op->owner = me;
  op->tag = tag;
  op->srcs = std::move(srcs);
  op->buf = buf;
  op->add = add;
  const auto it = std::find_if(box.unexpected.begin(), box.unexpected.end(),
                               [&](const std::shared_ptr<Message>& m) { return matches(*op, *m); });
  if (it != box.unexpected.end()) {
    complete_recv(*op, **it);
    box.unexpected.erase(it);
  } else {
    box.posted.push_back(op);
  }
  return op;
}

void SimWorld::cancel(OpState& op) {
  if (op.done || !op.is_recv) return;  // a send cannot be recalled: its data is already on the wire
  Box& box = boxes_[static_cast<std::size_t>(op.owner)];
  std::erase_if(box.posted, [&](const std::shared_ptr<OpState>& p) { return p.get() == &op; });
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
