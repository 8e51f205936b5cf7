// CollectiveSim: aggregated ring flows, per-message tree and pairwise flows, and the message version's math.
#include "sim/collective_sim.hpp"

#include <algorithm>
#include <sstream>

#include <simgrid/simix.hpp>
#include <xbt/config.hpp>

#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"
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

std::uint64_t hash_ranks(std::span<const Rank> ranks) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (const Rank r : ranks) h = (h ^ static_cast<std::uint64_t>(r)) * 1099511628211ULL;
  return h;
}

// The floats of ring chunks hi, hi - 1, ..., hi - count + 1 (mod P), in O(1): every chunk has n / P floats
// and the chunks below n % P one more (collectives::ring_chunk).
std::size_t chunk_run(std::size_t n, int P, int hi, int count) {
  if (count <= 0) return 0;
  const auto p = static_cast<std::size_t>(P), extra = n % p, c = static_cast<std::size_t>(count);
  auto below = [extra](std::size_t x) { return std::min(x, extra); };  // chunks < extra among [0, x)
  const std::size_t rem = c % p, lo = static_cast<std::size_t>(mod(hi - static_cast<int>(rem) + 1, P));
  std::size_t big = (c / p) * extra;
  big += lo + rem <= p ? below(lo + rem) - below(lo) : below(p) - below(lo) + below(lo + rem - p);
  return c * (n / p) + big;
}

}  // namespace

const char* to_string(Fidelity f) { return f == Fidelity::kMessage ? "message" : "collective"; }

CollectiveSim::CollectiveSim(SimWorld& world, int max_ring_phases, int flow_budget)
    : world_(world), max_ring_phases_(max_ring_phases), flow_budget_(flow_budget) {
  const std::string model = simgrid::config::get_value<std::string>("network/model");
  smpi_factors_ = model == "SMPI" || model == "IB";
  if (smpi_factors_) {
    smpi_lat_ = parse_factors(simgrid::config::get_value<std::string>("smpi/lat-factor"));
    smpi_bw_ = parse_factors(simgrid::config::get_value<std::string>("smpi/bw-factor"));
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

std::uint64_t CollectiveSim::flow_bytes(double total_bytes, double message_bytes) const {
  if (!smpi_factors_) return static_cast<std::uint64_t>(total_bytes);
  return static_cast<std::uint64_t>(total_bytes * factor_for(smpi_bw_, total_bytes) / factor_for(smpi_bw_, message_bytes));
}

std::shared_ptr<CollectiveSim::Instance> CollectiveSim::join(const Key& key, std::span<const Rank> ranks, Rank self) {
  const std::uint64_t seq = next_seq_[{key, self}]++;
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
    case CollectiveOp::kRingAllgather: return ring(call, index);
    case CollectiveOp::kTreeReduce: return tree_reduce(call, index);
    case CollectiveOp::kTreeBroadcast: return tree_broadcast(call, index);
    case CollectiveOp::kPairwiseExchange: break;
  }
}

// The ring's sums, chunk by chunk in the order the message version adds them (see ring.cpp): with
// reduce-scatter shift h, chunk c starts at member c + h and member c + h + k adds its own values to the
// running sum it receives. Allreduce: h = 0, then everyone gets the sums; reduce-scatter: h = 1, member c
// keeps chunk c; allgather: member c's chunk c goes to everyone.
void CollectiveSim::ring_math(Instance& inst, CollectiveOp op, std::size_t n) const {
  const int P = static_cast<int>(inst.members.size());
  auto data = [&](int j) -> Slice { return inst.members[static_cast<std::size_t>(mod(j, P))].data; };
  std::vector<float> acc;
  for (int c = 0; c < P; ++c) {
    const auto [off, len] = collectives::ring_chunk(n, P, c);
    if (op == CollectiveOp::kRingAllgather) {
      for (int j = 1; j < P; ++j) rules::copy(data(c + j).sub(off, len), data(c).sub(off, len));
      continue;
    }
    const int h = op == CollectiveOp::kRingAllreduce ? 0 : 1;
    acc.assign(data(c + h).data.begin() + static_cast<std::ptrdiff_t>(off),
               data(c + h).data.begin() + static_cast<std::ptrdiff_t>(off + len));
    const Slice sum(std::span<float>(acc), len);
    for (int k = 1; k < P; ++k) rules::axpy(sum, 1.0f, data(c + h + k).sub(off, len));
    if (op == CollectiveOp::kRingReduceScatter) {
      rules::copy(data(c).sub(off, len), sum);
    } else {
      for (int j = 0; j < P; ++j) rules::copy(data(j).sub(off, len), sum);
    }
  }
}

int CollectiveSim::ring_phases(int P, int steps) const {
  const int budget = max_ring_phases_ > 0 ? max_ring_phases_ : std::max(1, flow_budget_ / P);
  return std::clamp(budget, 1, steps);
}

void CollectiveSim::ring(const CollectiveCall& call, int index) {
  const Group& group = *call.group;
  const int P = group.size(), r = index;
  const std::size_t n = call.data.count;
  auto inst = join({static_cast<int>(call.op), call.tag, hash_ranks(group.members()), P}, group.members(), call.self);
  Member& me = inst->members[static_cast<std::size_t>(r)];
  Member& left = inst->members[static_cast<std::size_t>(mod(r - 1, P))];
  me.data = call.data;
  // 1. The last member to arrive does everyone's math, and wakes those waiting for it (below).
  if (++inst->arrived == P) {
    if (!call.data.data.empty()) ring_math(*inst, call.op, n);
    for (int j = 0; j < P; ++j) world_.wake(inst->members[static_cast<std::size_t>(j)].rank);
  }

  // The message version's steps: which chunk member r sends in step s, and how many floats it adds.
  // Reduce-scatter with shift h sends chunk r - s - h and adds chunk r - s - 1 - h; allgather with shift g
  // sends chunk r + g - s (ring.cpp). Allreduce: h = 0 for P - 1 steps, then g = 1.
  const bool allreduce = call.op == CollectiveOp::kRingAllreduce;
  const int steps = allreduce ? 2 * (P - 1) : P - 1;
  auto sent_floats = [&](int a, int b) -> std::size_t {  // of steps [a, b)
    if (call.op == CollectiveOp::kRingAllgather) return chunk_run(n, P, r - a, b - a);
    if (call.op == CollectiveOp::kRingReduceScatter) return chunk_run(n, P, r - a - 1, b - a);
    const int split = std::clamp(P - 1, a, b);
    const int ag = std::max(a, P - 1);
    return chunk_run(n, P, r - a, split - a) + chunk_run(n, P, r + 1 - (ag - (P - 1)), b - ag);
  };
  auto added_floats = [&](int a, int b) -> std::size_t {  // of steps [a, b)
    if (call.op == CollectiveOp::kRingAllgather) return 0;
    return chunk_run(n, P, r - a - 1 - (allreduce ? 0 : 1), std::min(b, P - 1) - a);
  };
  const int phases = ring_phases(P, steps);
  auto first_step = [&](int q) { return static_cast<int>(static_cast<long>(q) * steps / phases); };
  auto charge_adds = [&](int q) {  // the additions of the steps received in phase q
    const std::size_t added = added_floats(first_step(q), first_step(q + 1));
    if (added > 0 && call.compute != nullptr) call.compute->charge_elementwise(added, 3);
  };

  // 2. Phase q: one flow to the right neighbour with the chunks of steps [first_step(q), first_step(q + 1)),
  // after the other steps' latencies. As in the message version, where step s is sent once step s - 1 was
  // received and added and its own send completed, phase q is sent once the left neighbour's phase q - 1
  // arrived and was added and my phase q - 1 arrived; the additions overlap my own flow. A sender actor
  // carries my flows, so that I can receive and add meanwhile.
  const Rank right = group.world_rank(mod(r + 1, P));
  sg4::Host* src = world_.host(call.self);
  sg4::Host* dst = world_.host(right);
  Member* mine = &me;
  auto sender = sg4::Actor::create("ring-flow", src, [&, mine, src, dst, right] {
    for (int q = 0; q < phases; ++q) {
      world_.wait_until(call.self, [&] { return mine->phases_allowed > q; }, kForever);
      const int a = first_step(q), b = first_step(q + 1);
      const std::size_t floats = sent_floats(a, b);
      const double bytes = static_cast<double>(sizeof(float) * floats);
      world_.account(call.self, right, sizeof(float) * floats, static_cast<std::uint64_t>(b - a));
      if (src != dst) {
        const double message_bytes = bytes / (b - a);
        sg4::this_actor::sleep_for((b - a - 1) * latency_s(src, dst, message_bytes));
        sg4::Comm::sendto(src, dst, flow_bytes(bytes, message_bytes));
      }
      mine->phases_sent = q + 1;
      world_.wake(right);
      world_.wake(call.self);
    }
  });
  for (int q = 0; q < phases; ++q) {
    me.phases_allowed = q + 1;
    world_.wake(call.self);
    world_.wait_until(call.self, [&] { return left.phases_sent > q; }, kForever);  // 3. receive and add
    charge_adds(q);
    world_.wait_until(call.self, [&] { return me.phases_sent > q; }, kForever);  // my phase q arrived
  }
  // 4. My last step depends on every member's first (P - 1 hops away); phases shorten the dependency chains
  // by their number of steps, so wait for the last member explicitly.
  world_.wait_until(call.self, [&] { return inst->arrived == P; }, kForever);
  sender->join();
}

void CollectiveSim::tree_reduce(const CollectiveCall& call, int index) {
  const Group& group = *call.group;
  const int P = group.size();
  auto inst = join({static_cast<int>(call.op), call.tag, hash_ranks(group.members()), P}, group.members(), call.self);
  Member& me = inst->members[static_cast<std::size_t>(index)];
  const int vr = mod(index - call.root, P);
  const std::uint64_t bytes = sizeof(float) * call.data.count;
  for (int mask = 1; mask < P; mask <<= 1) {
    if (vr & mask) {  // 1. my partial sum to my parent; done once it is delivered
      const Rank parent = group.world_rank(mod(vr - mask + call.root, P));
      if (!call.data.data.empty()) me.payload.assign(call.data.data.begin(), call.data.data.end());
      world_.account(call.self, parent, bytes, 1);
      me.trace = TimeAccount::trace_send(world_.host(call.self), world_.host(parent));
      if (world_.host(call.self) != world_.host(parent)) sg4::Comm::sendto(world_.host(call.self), world_.host(parent), bytes);
      TimeAccount::arrived(me.trace.get());
      me.delivered = true;
      world_.wake(parent);
      return;
    }
    if (vr + mask < P) {  // 2. add the partial sum of the subtree rooted at vr + mask, as ring.cpp's order
      Member& child = inst->members[static_cast<std::size_t>(mod(vr + mask + call.root, P))];
      TimeAccount::waiting();
      world_.wait_until(call.self, [&] { return child.delivered; }, kForever);
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
  auto inst = join({static_cast<int>(call.op), call.tag, hash_ranks(group.members()), P}, group.members(), call.self);
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
    world_.wait_until(call.self, [&] { return me.delivered; }, kForever);
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
    if (world_.host(call.self) != world_.host(child.rank)) sg4::Comm::sendto(world_.host(call.self), world_.host(child.rank), bytes);
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
  const std::vector<Rank> pair = {std::min(call.self, call.peer), std::max(call.self, call.peer)};
  auto inst = join({static_cast<int>(call.op), call.tag, hash_ranks(pair), 2}, pair, call.self);
  const int index = call.self == pair[0] ? 0 : 1;
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
  if (world_.host(call.self) != world_.host(call.peer)) sg4::Comm::sendto(world_.host(call.self), world_.host(call.peer), bytes);
  TimeAccount::arrived(me.trace.get());
  me.delivered = true;
  world_.wake(call.peer);
  TimeAccount::waiting();
  world_.wait_until(call.self, [&] { return peer.delivered; }, kForever);
  TimeAccount::waited(peer.trace.get());
}

}  // namespace dts::sim
