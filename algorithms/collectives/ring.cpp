// Ring allreduce (Patarasuk & Yuan 2009) and its halves, as a plan: P-1 reduce-scatter steps, then P-1
// allgather steps, each member sending one chunk of count/P floats to its right neighbour and receiving one
// from its left. `shift` picks which chunk a member starts from, hence which it owns.
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/collectives/plans.hpp"

namespace dts::collectives {
namespace {
int mod(int a, int P) { return ((a % P) + P) % P; }

void check_member(Comm& comm, const Group& group, const char* what) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, std::string(what) + ": caller is not in the group");
}
}  // namespace

std::pair<std::size_t, std::size_t> ring_chunk(std::size_t n, int P, int i) {
  const std::size_t p = static_cast<std::size_t>(P), k = static_cast<std::size_t>(i);
  const std::size_t base = n / p, extra = n % p;
  return {k * base + std::min(k, extra), base + (k < extra ? 1 : 0)};
}

const char* RingPlan::name() const {
  switch (kind_) {
    case RingKind::kAllreduce:
      return "ring_allreduce";
    case RingKind::kReduceScatter:
      return "ring_reduce_scatter";
    case RingKind::kAllgather:
      break;
  }
  return "ring_allgather";
}

// In step s member r sends chunk r + shift(s). Reduce-scatter with shift h sends chunk r - s - h; allgather
// with shift g sends chunk r + g - s. Allreduce: h = 0 for P - 1 steps, then g = 1.
int RingPlan::shift(int s) const {
  if (kind_ == RingKind::kAllgather) return -s;
  if (kind_ == RingKind::kReduceScatter) return -s - 1;
  return s < P_ - 1 ? -s : 1 - (s - (P_ - 1));
}

std::size_t RingPlan::floats(int chunk) const { return ring_chunk(n_, P_, mod(chunk, P_)).second; }

PlanStage RingPlan::stage(int r, int s) const {
  const auto [send_off, send_n] = ring_chunk(n_, P_, mod(r + shift(s), P_));
  const auto [recv_off, recv_n] = ring_chunk(n_, P_, mod(r + shift(s) - 1, P_));
  PlanStage st;
  st.sends.push_back({.peer = mod(r + 1, P_), .chunk = {send_off, send_n}});
  st.recvs.push_back({.peer = mod(r - 1, P_), .chunk = {recv_off, recv_n}, .add = adds(s)});
  return st;
}

// Over all steps a reduce-scatter or allgather sends every chunk but one (the one its shift would reach in
// step P - 1), and a reduce-scatter adds every chunk but the one it sends first.
std::size_t RingPlan::sent_floats(int r, int first) const {
  if (first == 0) {
    if (kind_ != RingKind::kAllreduce) return n_ - floats(r + shift(P_ - 1));
    return 2 * n_ - floats(r - (P_ - 1)) - floats(r + 1 - (P_ - 1));
  }
  std::size_t sum = 0;
  for (int s = first; s < steps(); ++s) sum += floats(r + shift(s));
  return sum;
}

std::size_t RingPlan::added_floats(int r, int first) const {
  if (kind_ == RingKind::kAllgather) return 0;
  if (first == 0) return n_ - floats(r + shift(0));
  std::size_t sum = 0;
  for (int s = first; s < steps(); ++s) sum += adds(s) ? floats(r + shift(s) - 1) : 0;
  return sum;
}

void ring_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_allreduce");
  if (group.size() == 1) return;
  run_plan(comm, &compute, group, RingPlan(RingKind::kAllreduce, group.size(), data.count), data, tag);
}

void ring_reduce_scatter(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_reduce_scatter");
  if (group.size() == 1) return;
  run_plan(comm, &compute, group, RingPlan(RingKind::kReduceScatter, group.size(), data.count), data, tag);
}

void ring_allgather(Comm& comm, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_allgather");
  if (group.size() == 1) return;
  run_plan(comm, nullptr, group, RingPlan(RingKind::kAllgather, group.size(), data.count), data, tag);
}

AllreduceAlgo resolve_allreduce_algo(AllreduceAlgo algo, std::size_t count, int members) {
  if (algo != AllreduceAlgo::kAuto) return algo;
  constexpr std::size_t kIntermediateBytes = 10'000;  // Open MPI's intermediate_message
  if (count * sizeof(float) < kIntermediateBytes) return AllreduceAlgo::kHypercube;
  return count > static_cast<std::size_t>(members) ? AllreduceAlgo::kRing : AllreduceAlgo::kTree;
}

void allreduce(AllreduceAlgo algo, Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  switch (resolve_allreduce_algo(algo, data.count, group.size())) {
    case AllreduceAlgo::kRing:
      return ring_allreduce(comm, compute, group, data, tag);
    case AllreduceAlgo::kTree:
      return tree_allreduce(comm, compute, group, data, tag);
    case AllreduceAlgo::kHypercube:
    case AllreduceAlgo::kAuto:  // resolved above
      return hypercube_allreduce(comm, compute, group, data, tag);
  }
}

AllreduceAlgo parse_allreduce_algo(const std::string& name, const std::string& where) {
  if (name == "ring") return AllreduceAlgo::kRing;
  if (name == "tree") return AllreduceAlgo::kTree;
  if (name == "hypercube") return AllreduceAlgo::kHypercube;
  if (name == "auto") return AllreduceAlgo::kAuto;
  throw ConfigError(where, "unknown allreduce \"" + echo(name) + "\" (expected ring, tree, hypercube or auto)");
}

const char* to_string(AllreduceAlgo algo) {
  switch (algo) {
    case AllreduceAlgo::kRing:
      return "ring";
    case AllreduceAlgo::kTree:
      return "tree";
    case AllreduceAlgo::kHypercube:
      return "hypercube";
    case AllreduceAlgo::kAuto:
      break;
  }
  return "auto";
}

}  // namespace dts::collectives
