#include "algorithms/gossip_family.hpp"

#include <array>

#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {

GossipKeys read_gossip_keys(ConfigReader& r) {
  GossipKeys k;
  k.schedule.probability = r.number("probability", 1.0, 1e-9, 1.0);
  k.schedule.period = r.integer("period", 1, 1, 1'000'000'000);
  k.schedule.seed = static_cast<std::uint64_t>(r.integer("seed", 1234, 0, std::int64_t{1} << 62));
  const std::string sync = r.choice("sync", "global", {"global", "shared", "async"});
  k.sync = sync == "global" ? GossipSync::kGlobal : sync == "shared" ? GossipSync::kShared : GossipSync::kAsync;
  return k;
}

namespace {
std::vector<Rank> others_of(const Comm& comm) {
  std::vector<Rank> o;
  for (Rank r = 0; r < comm.size(); ++r) {
    if (r != comm.rank()) o.push_back(r);
  }
  return o;
}
}  // namespace

GossipControl::GossipControl(Context& ctx, const GossipKeys& keys, std::shared_ptr<GossipChoiceCache> cache)
    : ctx_(ctx),
      keys_(keys),
      cache_(std::move(cache)),
      one_(1, true),
      all_(static_cast<std::size_t>(ctx.comm.size()), ctx.compute.real()) {}

Choices GossipControl::choices(std::int64_t update) {
  const int W = ctx_.comm.size();
  if (keys_.sync == GossipSync::kShared) return cache_->choices(W, update);
  // global: the code's barrier, then every worker announces its choice in one float (ring chunk i of W floats
  // is exactly element i). In modeled numerics the gather carries no values (W floats on each of W ranks, 17 GB
  // at 65,536): every worker's choice is the shared draw's, which is what it announces.
  const Group group = Group::range(0, W);
  collectives::tree_allreduce(ctx_.comm, ctx_.compute, group, one_, tags::kGossipBarrier);
  if (!all_.real()) {
    collectives::ring_allgather(ctx_.comm, group, all_, tags::kGossipChoices);
    return cache_->choices(W, update);
  }
  const Rank me = ctx_.comm.rank();
  all_.data()[static_cast<std::size_t>(me)] = static_cast<float>(gossip_choice(keys_.schedule, W, me, update));
  collectives::ring_allgather(ctx_.comm, group, all_, tags::kGossipChoices);
  auto c = std::make_shared<std::vector<Rank>>(static_cast<std::size_t>(W));
  for (std::size_t i = 0; i < c->size(); ++i) (*c)[i] = static_cast<Rank>(all_.data()[i]);
  return c;
}

GossipInbox::GossipInbox(Context& ctx, Tag tag, Vec buffer)
    : ctx_(ctx), tag_(tag), buffer_(std::move(buffer)), others_(others_of(ctx.comm)) {
  post();
}

void GossipInbox::post() {
  if (!others_.empty()) pending_ = ctx_.comm.irecv_any(others_, tag_, buffer_);  // a lone worker hears nothing
}

void GossipInbox::poll(const Handler& handle) {
  while (pending_.valid() && pending_.test()) {
    const Rank src = pending_.source();
    require_ok(pending_.wait(0), src, "gossip inbox");
    ++received_;
    handle(src, buffer_);
    post();
  }
}

void GossipInbox::finish(const std::vector<float>& sent_to, const Handler& handle) {
  Vec counts(sent_to.size(), true);
  std::copy(sent_to.begin(), sent_to.end(), counts.data().begin());
  collectives::tree_allreduce(ctx_.comm, ctx_.compute, Group::range(0, ctx_.comm.size()), counts, tags::kGossipCounts);
  const auto expected = static_cast<std::int64_t>(counts.data()[static_cast<std::size_t>(ctx_.comm.rank())]);
  while (received_ < expected) {
    pending_.wait_ok();
    ++received_;
    handle(pending_.source(), buffer_);
    post();
  }
  if (pending_.valid()) pending_.cancel();
  pending_.reset();
}

GossipServer::GossipServer(Context& ctx, Vec request_buffer, Serve serve)
    : ctx_(ctx), request_(std::move(request_buffer)), serve_(std::move(serve)), others_(others_of(ctx.comm)) {
  post();
}

void GossipServer::post() {
  if (!others_.empty()) pending_ = ctx_.comm.irecv_any(others_, tags::kGossipRequest, request_);
}

void GossipServer::serve_pending() {
  const Rank src = pending_.source();
  require_ok(pending_.wait(0), src, "gossip server");
  serve_(src, request_);
  post();
}

void GossipServer::poll() {
  while (pending_.valid() && pending_.test()) serve_pending();
}

void GossipServer::wait_serving(Request& reply) {
  std::array<Request, 2> reqs{std::move(reply), std::move(pending_)};
  for (;;) {
    const auto c = ctx_.comm.wait_any(reqs);
    require_ok(c.status, c.source, "gossip");
    if (c.index == 0) break;
    serve_(c.source, request_);
    reqs[1] = ctx_.comm.irecv_any(others_, tags::kGossipRequest, request_);
  }
  pending_ = std::move(reqs[1]);
}

void GossipServer::finish() {
  if (others_.empty()) return;
  Vec one(1, true), in(1, true);
  std::vector<Request> sends;
  for (const Rank r : others_) sends.push_back(ctx_.comm.isend(r, tags::kGossipDone, one));
  std::array<Request, 2> reqs{std::move(pending_), ctx_.comm.irecv_any(others_, tags::kGossipDone, in)};
  for (std::size_t done = 0; done < others_.size();) {
    const auto c = ctx_.comm.wait_any(reqs);
    require_ok(c.status, c.source, "gossip");
    if (c.index == 0) {
      serve_(c.source, request_);
      reqs[0] = ctx_.comm.irecv_any(others_, tags::kGossipRequest, request_);
    } else if (++done < others_.size()) {
      reqs[1] = ctx_.comm.irecv_any(others_, tags::kGossipDone, in);
    }
  }
  reqs[0].cancel();
  for (auto& s : sends) s.wait_ok();
}

void gossip_observe(Context& ctx, std::int64_t update, ConstSlice params) {
  if (update == ctx.steps || ctx.recorder.eval_due(update)) ctx.recorder.observe(update, params);
}

void gossip_finish(Context& ctx, Slice params, std::optional<float> weight, Tag tag, const Group* members) {
  const Group everyone = members != nullptr ? *members : Group::range(0, ctx.comm.size());
  const int W = everyone.size();
  const Rank me = ctx.comm.rank();
  if (me == 0) ctx.recorder.evaluate_own(ctx.steps, params);
  if (weight) {
    rules::scale(params, *weight);
    ctx.compute.charge_elementwise(params.count, 2);
  }
  collectives::tree_allreduce(ctx.comm, ctx.compute, everyone, params, tag);
  if (!weight) rules::scale(params, 1.0f / static_cast<float>(W));
  if (me == 0) ctx.recorder.evaluate(ctx.steps, params, true);
}

}  // namespace dts
