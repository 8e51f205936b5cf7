// MPCA's binary tree reduce and swarm broadcast (driver_collectives.hpp).
#include "algorithms/collectives/driver_collectives.hpp"

#include <algorithm>

#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {
namespace {

PlanOptions surviving(bool survive) {
  PlanOptions o;
  o.survive = survive;
  return o;
}

}  // namespace

int BinaryTreeReducePlan::stages(int member) const {
  const int v = (member - root_ + P_) % P_;
  int count = 0;
  for (const int child : {2 * v + 1, 2 * v + 2}) count += child < P_ ? 1 : 0;
  return count + (v == 0 ? 0 : 1);
}

PlanStage BinaryTreeReducePlan::stage(int member, int s) const {
  const int v = (member - root_ + P_) % P_;
  PlanStage st;
  for (const int child : {2 * v + 1, 2 * v + 2}) {  // 1. add each child's partial sum, the first child first
    if (child < P_ && s-- == 0) {
      st.recvs.push_back({.peer = (child + root_) % P_, .chunk = {0, n_}, .add = true});
      return st;
    }
  }
  st.sends.push_back({.peer = ((v - 1) / 2 + root_) % P_, .chunk = {0, n_}});  // 2. the total to my parent
  return st;
}

bool weighted_tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag,
                          bool weighted, bool survive) {
  const int me = group.index_of(comm.rank());
  DTS_ASSERT(me >= 0, "weighted_tree_reduce: caller is not in the group");
  DTS_ASSERT(data.count >= 1, "weighted_tree_reduce: no room for the weight");
  const std::size_t n = data.count - 1;
  if (me == root) {
    if (data.real()) std::fill(data.data.begin(), data.data.end(), 0.0f);
  } else if (weighted) {
    if (data.real()) rules::scale(data.sub(0, n), data.data[n]);
    compute.charge_reduce(n, 2);
  }
  if (group.size() == 1) return true;
  return run_plan(comm, &compute, group, BinaryTreeReducePlan(group.size(), root, data.count), data, tag,
                  surviving(survive));
}

SwarmBroadcastPlan::SwarmBroadcastPlan(int P, int root, std::size_t n, std::size_t chunk_floats, bool reserve)
    : P_(P), root_(root), n_(n), chunk_floats_(chunk_floats), reserve_(reserve) {
  DTS_ASSERT(chunk_floats > 0, "swarm_broadcast: chunks of no floats");
  chunks_ = (n + chunk_floats - 1) / chunk_floats;
}

Chunk SwarmBroadcastPlan::chunk(std::size_t j) const {
  const std::size_t at = j * chunk_floats_;
  return {at, std::min(chunk_floats_, n_ - at)};
}

int SwarmBroadcastPlan::stages(int member) const {
  const int v = (member - root_ + P_) % P_;
  if (v == 0 || !reserve_) return 1;
  return 1 + ring_steps(v - 1).count();  // from the root, then the ring steps that move chunks
}

// Worker w's ring steps that move a chunk, in order. In step s it takes the chunks seeded at t = w - s and passes
// on those seeded at t + 1 (mod K): with C < K - 1 chunks only the steps with t < C or t = K - 1 (t != w) move
// any, which are s in [w - C + 1, w] and w + 1 for w >= C, and s in [1, w + 1] and [K + w - C + 1, K - 1] for
// w < C. Skipping the others changes nothing a member sends, receives or waits for, and a chunk still passes
// around the ring in order; a loop over all K - 1 steps of every worker made MPCA's broadcasts quadratic in P.
SwarmBroadcastPlan::Steps SwarmBroadcastPlan::ring_steps(int w) const {
  const int K = P_ - 1, C = static_cast<int>(std::min<std::size_t>(chunks_, static_cast<std::size_t>(K)));
  if (C == 0) return {};
  if (C + 1 >= K) return {{1, K - 1}, {1, 0}};  // every step
  if (w >= C) return {{w - C + 1, w < K - 1 ? w + 1 : w}, {1, 0}};
  return {{1, w + 1}, {K + w - C + 1, K - 1}};
}

PlanStage SwarmBroadcastPlan::stage(int member, int s) const {
  const int v = (member - root_ + P_) % P_, K = P_ - 1;
  const auto world = [&](int worker) { return (worker + 1 + root_) % P_; };  // worker index -> group index
  const auto seed = [&](std::size_t j) { return static_cast<int>(j % static_cast<std::size_t>(K)); };
  // The chunks first given to worker u (seed u): u, u + K, u + 2K, ... A stage visits only its own: a loop over
  // all chunks in each of the P - 1 stages of every worker made MPCA's broadcasts quadratic in P.
  const auto seeded = [&](int u, auto&& each) {
    for (auto j = static_cast<std::size_t>(u); j < chunks_; j += static_cast<std::size_t>(K)) each(j);
  };
  PlanStage st;
  if (v == 0) {  // the root: every chunk once to its seed, or to every worker (none in a group of one)
    if (K == 0) return st;
    for (std::size_t j = 0; j < chunks_; ++j) {
      if (reserve_) {
        st.sends.push_back({.peer = world(seed(j)), .chunk = chunk(j)});
        continue;
      }
      for (int w = 0; w < K; ++w) st.sends.push_back({.peer = world(w), .chunk = chunk(j)});
    }
    return st;
  }
  const int w = v - 1;
  if (s == 0) {  // 1. my chunks from the root
    const auto from_root = [&](std::size_t j) { st.recvs.push_back({.peer = root_, .chunk = chunk(j)}); };
    if (reserve_) {
      seeded(w, from_root);
    } else {
      for (std::size_t j = 0; j < chunks_; ++j) from_root(j);
    }
    return st;
  }
  // 2. ring step `step`: pass on the chunks first given to worker w - step + 1, take those first given to w - step
  const int step = ring_steps(w).at(s);
  const int give = ((w - step + 1) % K + K) % K, take = ((w - step) % K + K) % K;
  seeded(give, [&](std::size_t j) { st.sends.push_back({.peer = world((w + 1) % K), .chunk = chunk(j)}); });
  seeded(take, [&](std::size_t j) { st.recvs.push_back({.peer = world((w + K - 1) % K), .chunk = chunk(j)}); });
  return st;
}

bool swarm_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag, std::size_t chunk_floats,
                     bool reserve, bool survive) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, "swarm_broadcast: caller is not in the group");
  if (group.size() == 1 || data.count == 0) return true;
  return run_plan(comm, nullptr, group, SwarmBroadcastPlan(group.size(), root, data.count, chunk_floats, reserve), data,
                  tag, surviving(survive));
}

}  // namespace dts::collectives
