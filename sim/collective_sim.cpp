// CollectiveSim: joining a collective, latencies, the binomial trees and the pairwise exchange (rings:
// collective_ring.cpp).
#include "sim/collective_sim.hpp"

#include <algorithm>
#include <simgrid/simix.hpp>
#include <sstream>
#include <xbt/config.hpp>

#include "algorithms/api/compute.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

int mod(int a, int P) { return ((a % P) + P) % P; }

// "65472:11.6436;15424:3.48845;...;0:2.01467" -> ascending (threshold, factor).
std::vector<std::pair<double, double>> parse_factors(const std::string& text) {
  std::vector<std::pair<double, double>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) continue;
    out.emplace_back(std::stod(item.substr(0, colon)), std::stod(item.substr(colon + 1)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// SimGrid's piecewise rule: the factor of the largest threshold strictly below the size, 1 below all.
double factor_for(const std::vector<std::pair<double, double>>& factors, double bytes) {
  double f = 1.0;
  for (const auto& [threshold, value] : factors) {
    if (bytes <= threshold) break;
    f = value;
  }
  return f;
}

}  // namespace

const char* to_string(Fidelity f) { return f == Fidelity::kMessage ? "message" : "collective"; }

CollectiveSim::CollectiveSim(SimWorld& world, RingSampling rings) : world_(world), rings_(rings) {
  const std::string model = simgrid::config::get_value<std::string>("network/model");
  smpi_factors_ = model == "SMPI" || model == "IB";
  if (smpi_factors_) {
    smpi_lat_ = parse_factors(simgrid::config::get_value<std::string>("smpi/lat-factor"));
  } else {
    latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
  }
}

double CollectiveSim::latency_s(sg4::Host* a, sg4::Host* b, double bytes) const {
  // In the kernel (maestro): SimGrid 3.32's dragonfly routing crashes when called from an actor's stack.
  // Cached: a ring member asks for the same route every phase of every call.
  auto [it, fresh] = route_latency_.try_emplace({a, b}, 0.0);
  if (fresh) {
    it->second = simgrid::kernel::actor::simcall_answered([a, b] {
      std::vector<sg4::Link*> links;
      double sum = 0;
      a->route_to(b, links, &sum);
      return sum;
    });
  }
  return it->second * (smpi_factors_ ? factor_for(smpi_lat_, bytes) : latency_factor_);
}

std::shared_ptr<CollectiveSim::Instance> CollectiveSim::join(const CollectiveCall& call, const Group& group) {
  const std::span<const Rank> ranks = group.members();
  const Key key{static_cast<int>(call.op), call.tag, group.hash(), static_cast<int>(ranks.size())};
  const std::uint64_t seq = next_seq_[{key, call.self}]++;
  const auto at = std::make_pair(key, seq);
  auto& slot = open_[at];
  if (!slot) {
    slot = std::make_shared<Instance>();
    slot->members.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) slot->members[i].rank = ranks[i];
  }
  std::shared_ptr<Instance> inst = slot;
  if (++inst->joined == static_cast<int>(ranks.size())) open_.erase(at);  // every member holds it now
  return inst;
}

void CollectiveSim::run(const CollectiveCall& call) {
  const TimeAccount::Scope accounted(collective_category(world_, call));
  if (call.op == CollectiveOp::kPairwiseExchange) return pairwise(call);
  DTS_ASSERT(call.group != nullptr, "collective without a group");
  const int index = call.group->index_of(call.self);
  switch (call.op) {
    case CollectiveOp::kRingAllreduce:
    case CollectiveOp::kRingReduceScatter:
    case CollectiveOp::kRingAllgather:
      return ring(call, index);
    case CollectiveOp::kTreeReduce:
      return tree_reduce(call, index);
    case CollectiveOp::kTreeBroadcast:
      return tree_broadcast(call, index);
    case CollectiveOp::kPairwiseExchange:
      break;
  }
}

void CollectiveSim::tree_reduce(const CollectiveCall& call, int index) {
  const Group& group = *call.group;
  const int P = group.size();
  auto inst = join(call, group);
  Member& me = inst->members[static_cast<std::size_t>(index)];
  const int vr = mod(index - call.root, P);
  const std::uint64_t bytes = sizeof(float) * call.data.count;
  for (int mask = 1; mask < P; mask <<= 1) {
    if (vr & mask) {  // 1. my partial sum to my parent; done once it is delivered
      const Rank parent = group.world_rank(mod(vr - mask + call.root, P));
      if (!call.data.data.empty()) me.payload.assign(call.data.data.begin(), call.data.data.end());
      world_.account(call.self, parent, bytes, 1);
      me.trace = TimeAccount::trace_send(world_.host(call.self), world_.host(parent));
      if (world_.host(call.self) != world_.host(parent))
        sg4::Comm::sendto(world_.host(call.self), world_.host(parent), bytes);
      TimeAccount::arrived(me.trace.get());
      me.delivered = true;
      world_.wake(parent);
      return;
    }
    if (vr + mask < P) {  // 2. add the partial sum of the subtree rooted at vr + mask, as ring.cpp's order
      Member& child = inst->members[static_cast<std::size_t>(mod(vr + mask + call.root, P))];
      TimeAccount::waiting();
      world_.wait_until(
          call.self, [&] { return child.delivered; }, kForever);
      TimeAccount::waited(child.trace.get());
      if (!call.data.data.empty()) {
        rules::axpy(call.data, 1.0f, ConstSlice(std::span<const float>(child.payload), call.data.count));
        std::vector<float>().swap(child.payload);
      }
      if (call.compute != nullptr) call.compute->charge_elementwise(call.data.count, 3);
    }
  }
}

void CollectiveSim::tree_broadcast(const CollectiveCall& call, int index) {
  const Group& group = *call.group;
  const int P = group.size();
  auto inst = join(call, group);
  Member& me = inst->members[static_cast<std::size_t>(index)];
  me.data = call.data;
  me.arrived = true;
  const bool real = !call.data.data.empty();
  const int vr = mod(index - call.root, P);
  // 1. Receive from the parent: it copied into my buffer, or into a snapshot if I was not there yet.
  int mask = 1;
  while (mask < P && !(vr & mask)) mask <<= 1;
  if (mask < P) {
    TimeAccount::waiting();
    world_.wait_until(
        call.self, [&] { return me.delivered; }, kForever);
    TimeAccount::waited(me.trace.get());
    if (real && !me.payload.empty()) {
      rules::copy(call.data, ConstSlice(std::span<const float>(me.payload), call.data.count));
      std::vector<float>().swap(me.payload);
    }
  }
  // 2. Forward to my children one after the other, largest subtree first, each flow arrived before the next.
  const std::uint64_t bytes = sizeof(float) * call.data.count;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask >= P) continue;
    Member& child = inst->members[static_cast<std::size_t>(mod(vr + mask + call.root, P))];
    world_.account(call.self, child.rank, bytes, 1);
    child.trace = TimeAccount::trace_send(world_.host(call.self), world_.host(child.rank));
    if (world_.host(call.self) != world_.host(child.rank))
      sg4::Comm::sendto(world_.host(call.self), world_.host(child.rank), bytes);
    if (real) {
      if (child.arrived) {
        rules::copy(child.data, call.data);
      } else {
        child.payload.assign(call.data.data.begin(), call.data.data.end());
      }
    }
    TimeAccount::arrived(child.trace.get());
    child.delivered = true;
    world_.wake(child.rank);
  }
}

void CollectiveSim::pairwise(const CollectiveCall& call) {
  const Group pair({std::min(call.self, call.peer), std::max(call.self, call.peer)});
  auto inst = join(call, pair);
  const int index = call.self == pair.world_rank(0) ? 0 : 1;
  Member& me = inst->members[static_cast<std::size_t>(index)];
  Member& peer = inst->members[static_cast<std::size_t>(1 - index)];
  me.data = call.data;
  me.send = call.send;
  // 1. The second to arrive moves both vectors (both members stay blocked until both flows are done).
  if (++inst->arrived == 2 && !call.data.data.empty()) {
    DTS_ASSERT(peer.data.count == me.data.count, "pairwise_exchange: the partners' counts differ");
    const std::vector<float> theirs(peer.send.data.begin(), peer.send.data.end());  // may alias peer.data
    rules::copy(peer.data, me.send);
    rules::copy(me.data, ConstSlice(std::span<const float>(theirs), me.data.count));
  }
  // 2. My flow to the peer; then wait for the peer's.
  const std::uint64_t bytes = call.modeled_bytes.value_or(sizeof(float) * call.send.count);
  world_.account(call.self, call.peer, bytes, 1);
  me.trace = TimeAccount::trace_send(world_.host(call.self), world_.host(call.peer));
  if (world_.host(call.self) != world_.host(call.peer))
    sg4::Comm::sendto(world_.host(call.self), world_.host(call.peer), bytes);
  TimeAccount::arrived(me.trace.get());
  me.delivered = true;
  world_.wake(call.peer);
  TimeAccount::waiting();
  world_.wait_until(
      call.self, [&] { return peer.delivered; }, kForever);
  TimeAccount::waited(peer.trace.get());
}

}  // namespace dts::sim
