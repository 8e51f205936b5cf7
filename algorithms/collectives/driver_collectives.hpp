// The two collectives of MPCA SGD (papers/mpca_sgd.md §4.2, §4.6, §6), between a driver, the group's `root`, and
// the workers, the other members. Plans (algorithms/api/collective_plan.hpp), so that both backends and both
// simulator fidelities run the one description.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>

#include "algorithms/api/collective_plan.hpp"
#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/group.hpp"

namespace dts::collectives {

// Binary tree over group indices relative to the root, heap-ordered: relative index v has the children 2v + 1
// and 2v + 2 and the parent (v - 1) / 2; depth ceil(log2 (P + 1)) - 1. A member adds its first child's partial
// sum, then its second's (one stage each: the order of the additions is fixed), then sends the total to its
// parent; the root only adds. Spark's treeReduce with the driver on top (§4.2).
class BinaryTreeReducePlan final : public CollectivePlan {
 public:
  BinaryTreeReducePlan(int P, int root, std::size_t n) : P_(P), root_(root), n_(n) {}
  const char* name() const override { return "binary_tree_reduce"; }
  int size() const override { return P_; }
  int stages(int member) const override;
  PlanStage stage(int member, int s) const override;

 private:
  int P_, root_;
  std::size_t n_;
};

// MPCA's weighted reduction (Eq. 9 as a tree sum, §4.6). data = [x (data.count - 1 floats) | w] on every member
// but the root, which contributes nothing: each scales its x by its w (charged as an elementwise pass), then
// the binary tree sums; the root ends with [sum_i w_i x_i | sum_i w_i] and divides itself (a worker with w = 0
// adds nothing). Not `weighted`: x is summed as it is (the root divides by the count of workers), w still summed.
// `survive`: a member that fails partway does not stop the others (message fidelity): a receive from it or a
// send to it that ends with `peer failed` is skipped and the member goes on with its stages (a missing partial
// sum is not added; a chunk not received keeps what the buffer held). Returns whether every one of the
// caller's receives and sends succeeded. Without `survive` a failed peer throws PeerFailed.
bool weighted_tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice data, int root, Tag tag,
                          bool weighted = true, bool survive = false);

// Spark's chunked broadcast in which workers re-serve the chunks they hold (§6), as a fixed schedule: the data
// is cut into chunks of `chunk_floats` (the last shorter); with `reserve`, the root sends chunk j once, to
// worker j mod K (K = P - 1 workers, numbered by relative index - 1), and the workers then pass the chunks on
// around their ring in K - 1 steps: in step s worker w sends worker w + 1 the chunks first given to worker
// w - s + 1 and receives those first given to worker w - s. Every chunk reaches every worker exactly once, the
// root sends the data once, and each worker's uplink carries (K - 1) / K of it. Without `reserve` the root sends
// every chunk to every worker (a broadcast without a swarm). One message per chunk.
class SwarmBroadcastPlan final : public CollectivePlan {
 public:
  SwarmBroadcastPlan(int P, int root, std::size_t n, std::size_t chunk_floats, bool reserve);
  const char* name() const override { return reserve_ ? "swarm_broadcast" : "driver_broadcast"; }
  int size() const override { return P_; }
  int stages(int member) const override;
  PlanStage stage(int member, int s) const override;
  std::size_t chunks() const { return chunks_; }
  Chunk chunk(std::size_t j) const;

 private:
  // A worker's ring steps that move a chunk: the ranges [a, b] of `first` then `second` (empty where b < a).
  struct Steps {
    std::pair<int, int> first{1, 0}, second{1, 0};
    int count() const {
      return std::max(0, first.second - first.first + 1) + std::max(0, second.second - second.first + 1);
    }
    int at(int k) const {  // the k-th, from 1
      const int in_first = std::max(0, first.second - first.first + 1);
      return k <= in_first ? first.first + k - 1 : second.first + (k - in_first - 1);
    }
  };
  Steps ring_steps(int w) const;

  int P_, root_;
  std::size_t n_, chunk_floats_, chunks_;
  bool reserve_;
};

// Runs SwarmBroadcastPlan: afterwards every member holds the root's data.
// `survive` as for weighted_tree_reduce (a chunk a failed member should have passed on is left as it was).
bool swarm_broadcast(Comm& comm, const Group& group, Slice data, int root, Tag tag, std::size_t chunk_floats,
                     bool reserve, bool survive = false);

}  // namespace dts::collectives
