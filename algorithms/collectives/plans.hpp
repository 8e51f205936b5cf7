// The plans (algorithms/api/collective_plan.hpp) of the collectives of collectives.hpp: each collective's
// one description, run over Comm by run_plan and as flows by the simulator's collective fidelity.
#pragma once

#include <cstddef>

#include "algorithms/api/collective_plan.hpp"

namespace dts::collectives {

// Ring allreduce (Patarasuk & Yuan 2009), or one of its halves: P - 1 reduce-scatter steps in which member r
// sends chunk (r - s - h) to r + 1 and adds the chunk it receives from r - 1 (h = 0 within the allreduce, 1
// alone: then member r ends owning chunk r), and P - 1 allgather steps passing chunk (r + g - s) on (g = 1
// within the allreduce, 0 alone: member r starts owning chunk r).
enum class RingKind { kAllreduce, kReduceScatter, kAllgather };
class RingPlan final : public CollectivePlan, public RingPipeline {
 public:
  RingPlan(RingKind kind, int P, std::size_t n) : kind_(kind), P_(P), n_(n) {}
  const char* name() const override;
  int size() const override { return P_; }
  int stages(int) const override { return steps(); }
  PlanStage stage(int member, int s) const override;
  const RingPipeline* ring_pipeline() const override { return this; }

  int steps() const override { return kind_ == RingKind::kAllreduce ? 2 * (P_ - 1) : P_ - 1; }
  int shift(int s) const override;
  bool adds(int s) const override { return kind_ != RingKind::kAllgather && s < P_ - 1; }
  std::size_t sent_floats(int r, int first) const override;
  std::size_t added_floats(int r, int first) const override;

 private:
  std::size_t floats(int chunk) const;
  RingKind kind_;
  int P_;
  std::size_t n_;
};

// Binomial trees (as MPICH's MPIR_Reduce_binomial / MPIR_Bcast_binomial) over group indices relative to the
// root. Reduce: in round k (one stage per round) members with bit k set send their partial sum to the member
// 2^k below them and drop out, the others add the partial sum of the member 2^k above. Broadcast: a stage
// receiving from the parent, then one stage per child, largest subtree first.
class TreeReducePlan final : public CollectivePlan {
 public:
  TreeReducePlan(int P, int root, std::size_t n) : P_(P), root_(root), n_(n) {}
  const char* name() const override { return "tree_reduce"; }
  int size() const override { return P_; }
  int stages(int member) const override;
  PlanStage stage(int member, int s) const override;

 private:
  int P_, root_;
  std::size_t n_;
};

class TreeBroadcastPlan final : public CollectivePlan {
 public:
  TreeBroadcastPlan(int P, int root, std::size_t n) : P_(P), root_(root), n_(n) {}
  const char* name() const override { return "tree_broadcast"; }
  int size() const override { return P_; }
  int stages(int member) const override;
  PlanStage stage(int member, int s) const override;

 private:
  int parent_mask(int vr) const;  // the bit that leads to my parent; P for the root
  int P_, root_;
  std::size_t n_;
};

// Both directions between the two members at once: each sends its input and receives the other's into its
// data (which may alias the input: the sends go first).
class PairwisePlan final : public CollectivePlan {
 public:
  explicit PairwisePlan(std::size_t n) : n_(n) {}
  const char* name() const override { return "pairwise_exchange"; }
  int size() const override { return 2; }
  int stages(int) const override { return 1; }
  PlanStage stage(int member, int s) const override;

 private:
  std::size_t n_;
};

// Recursive doubling (hypercube) allreduce, as MPICH's MPIR_Allreduce_intra_recursive_doubling: with pof2 the
// largest power of two <= P and rem = P - pof2, the first 2 rem members fold in pairs (the even one sends its
// vector to the odd one, which adds it); the pof2 remaining members then exchange their full vectors with
// the partner across each of the lg pof2 dimensions and add them; finally each odd member of the folded pairs
// sends the sum back to its even partner. Every member ends with the same floats (a + b == b + a).
class HypercubePlan final : public CollectivePlan {
 public:
  HypercubePlan(int P, std::size_t n);
  const char* name() const override { return "hypercube_allreduce"; }
  int size() const override { return P_; }
  int stages(int member) const override;
  PlanStage stage(int member, int s) const override;

 private:
  int P_, pof2_, rem_;
  std::size_t n_;
};

}  // namespace dts::collectives
