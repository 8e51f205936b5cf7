// Ring allreduce (Patarasuk & Yuan 2009): P-1 reduce-scatter steps, then P-1 allgather steps, each member
// sending one chunk of count/P floats to its right neighbour and receiving one from its left.
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts::collectives {
namespace {
// Chunk i of a P-way split of n: the first n % P chunks get one extra element.
std::pair<std::size_t, std::size_t> chunk(std::size_t n, int P, int i) {
  const std::size_t p = static_cast<std::size_t>(P), k = static_cast<std::size_t>(i);
  const std::size_t base = n / p, extra = n % p;
  return {k * base + std::min(k, extra), base + (k < extra ? 1 : 0)};
}
int mod(int a, int P) { return ((a % P) + P) % P; }
}  // namespace

void ring_allreduce(Comm& comm, Compute& compute, const Group& group, Slice data, Tag tag) {
  const int P = group.size();
  const int r = group.index_of(comm.rank());
  DTS_ASSERT(r >= 0, "ring_allreduce: caller is not in the group");
  if (P == 1) return;
  const Rank right = group.world_rank(mod(r + 1, P));
  const Rank left = group.world_rank(mod(r - 1, P));
  Vec inbox(chunk(data.count, P, 0).second, data.real());

  // 1. Reduce-scatter: after step s, chunk (r - s - 1) holds the sum of s + 2 members' values.
  for (int s = 0; s < P - 1; ++s) {
    const auto [send_off, send_n] = chunk(data.count, P, mod(r - s, P));
    const auto [recv_off, recv_n] = chunk(data.count, P, mod(r - s - 1, P));
    Slice in = inbox.sub(0, recv_n);
    Request rx = comm.irecv(left, tag, in);
    Request tx = comm.isend(right, tag, data.sub(send_off, send_n));
    rx.wait_ok();
    rules::axpy(data.sub(recv_off, recv_n), 1.0f, in);
    compute.charge_elementwise(recv_n, 3);
    tx.wait_ok();
  }
  // 2. Allgather: member r now owns the full sum of chunk (r + 1); pass the sums around the ring.
  for (int s = 0; s < P - 1; ++s) {
    const auto [send_off, send_n] = chunk(data.count, P, mod(r + 1 - s, P));
    const auto [recv_off, recv_n] = chunk(data.count, P, mod(r - s, P));
    Request rx = comm.irecv(left, tag, data.sub(recv_off, recv_n));
    Request tx = comm.isend(right, tag, data.sub(send_off, send_n));
    rx.wait_ok();
    tx.wait_ok();
  }
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
  throw ConfigError(where, "unknown allreduce \"" + name + "\" (expected ring or tree)");
}

}  // namespace dts::collectives
