// Ring allreduce (Patarasuk & Yuan 2009): P-1 reduce-scatter steps, then P-1 allgather steps, each member
// sending one chunk of count/P floats to its right neighbour and receiving one from its left. The two halves
// are also collectives of their own; `shift` picks which chunk a member starts from, hence which it owns.
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {
namespace {
int mod(int a, int P) { return ((a % P) + P) % P; }

// Each step waits its send before the chunk sent can change: MPI and the simulator read it in place.
const SendOptions kInPlace{.modeled_bytes = std::nullopt, .borrow = true};
const RecvOptions kAdd{.add = true};

// Reduce-scatter: in step s member r sends chunk (r - s - shift) and adds the received chunk
// (r - s - 1 - shift) into its own, so afterwards member r holds the full sum of chunk (r + 1 - shift).
void reduce_scatter_steps(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag, int shift) {
  const int P = group.size();
  const int r = group.index_of(comm.rank());
  const Rank right = group.world_rank(mod(r + 1, P));
  const Rank left = group.world_rank(mod(r - 1, P));
  for (int s = 0; s < P - 1; ++s) {
    const auto [send_off, send_n] = ring_chunk(data.count, P, mod(r - s - shift, P));
    const auto [recv_off, recv_n] = ring_chunk(data.count, P, mod(r - s - 1 - shift, P));
    Request rx = comm.irecv(left, tag, data.sub(recv_off, recv_n), kAdd);  // the received chunk is added
    Request tx = comm.isend(right, tag, data.sub(send_off, send_n), kInPlace);
    rx.wait_ok();
    compute.charge_elementwise(recv_n, 3);
    tx.wait_ok();
  }
}

// Allgather: member r starts owning chunk (r + shift); in step s it passes chunk (r + shift - s) on and
// receives chunk (r + shift - s - 1).
void allgather_steps(Comm& comm, const Group& group, Slice data, Tag tag, int shift) {
  const int P = group.size();
  const int r = group.index_of(comm.rank());
  const Rank right = group.world_rank(mod(r + 1, P));
  const Rank left = group.world_rank(mod(r - 1, P));
  for (int s = 0; s < P - 1; ++s) {
    const auto [send_off, send_n] = ring_chunk(data.count, P, mod(r + shift - s, P));
    const auto [recv_off, recv_n] = ring_chunk(data.count, P, mod(r + shift - s - 1, P));
    Request rx = comm.irecv(left, tag, data.sub(recv_off, recv_n));
    Request tx = comm.isend(right, tag, data.sub(send_off, send_n), kInPlace);
    rx.wait_ok();
    tx.wait_ok();
  }
}

void check_member(Comm& comm, const Group& group, const char* what) {
  DTS_ASSERT(group.index_of(comm.rank()) >= 0, std::string(what) + ": caller is not in the group");
}

}  // namespace

namespace detail {
bool delegated(Comm& comm, Compute* compute, const Group& group, Slice data, int root, Tag tag, CollectiveOp op) {
  CollectiveEngine* engine = comm.collective_engine();
  if (engine == nullptr) return false;
  CollectiveCall call;
  call.op = op;
  call.self = comm.rank();
  call.group = &group;
  call.data = data;
  call.root = root;
  call.tag = tag;
  call.compute = compute;
  engine->run(call);
  return true;
}
}  // namespace detail

std::pair<std::size_t, std::size_t> ring_chunk(std::size_t n, int P, int i) {
  const std::size_t p = static_cast<std::size_t>(P), k = static_cast<std::size_t>(i);
  const std::size_t base = n / p, extra = n % p;
  return {k * base + std::min(k, extra), base + (k < extra ? 1 : 0)};
}

void ring_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_allreduce");
  if (group.size() == 1) return;
  if (detail::delegated(comm, &compute, group, data, 0, tag, CollectiveOp::kRingAllreduce)) return;
  // 1. Reduce-scatter: after step s, chunk (r - s - 1) holds the sum of s + 2 members' values.
  reduce_scatter_steps(comm, compute, group, data, tag, 0);
  // 2. Allgather: member r now owns the full sum of chunk (r + 1); pass the sums around the ring.
  allgather_steps(comm, group, data, tag, 1);
}

void ring_reduce_scatter(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_reduce_scatter");
  if (group.size() == 1) return;
  if (detail::delegated(comm, &compute, group, data, 0, tag, CollectiveOp::kRingReduceScatter)) return;
  reduce_scatter_steps(comm, compute, group, data, tag, 1);  // member r ends owning chunk r
}

void ring_allgather(Comm& comm, const Group& group, Slice data, Tag tag) {
  check_member(comm, group, "ring_allgather");
  if (group.size() == 1) return;
  if (detail::delegated(comm, nullptr, group, data, 0, tag, CollectiveOp::kRingAllgather)) return;
  allgather_steps(comm, group, data, tag, 0);
}

void allreduce(AllreduceAlgo algo, Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  if (algo == AllreduceAlgo::kRing) {
    ring_allreduce(comm, compute, group, data, tag);
  } else {
    tree_allreduce(comm, compute, group, data, tag);
  }
}

AllreduceAlgo parse_allreduce_algo(const std::string& name, const std::string& where) {
  if (name == "ring") return AllreduceAlgo::kRing;
  if (name == "tree") return AllreduceAlgo::kTree;
  throw ConfigError(where, "unknown allreduce \"" + echo(name) + "\" (expected ring or tree)");
}

}  // namespace dts::collectives
