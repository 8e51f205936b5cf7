// The timing recurrence of a ring pipeline (CollectiveSim's sampled rings, sim/collective_pipeline.cpp): member
// r starts step s + 1 at
//   max(max(start(r, s), arrival(r - 1, s)) + addition(r, s), arrival(r, s)),   arrival(r, s) = start(r, s) + wire(r,
//   s),
// where wire and addition are member r's figures for the size of the chunk it sends, or adds, in step s (chunks
// of n / P floats, or one more below `extra`); the left neighbour of member 0 is member P - 1. P x steps terms,
// 2(P - 1) steps: 5.4 x 10^8 terms per allreduce at 16,384 members. Computed in blocks of members that stay in
// the L1 cache for a band of steps (each block recomputes the band's dependencies on its left, a halo of as
// many members as the band has steps), with the same operations on the same values as step by step: the same
// bits.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dts::sim {

struct RingStep {
  std::size_t chunk0 = 0;  // the chunk member 0 sends: member r sends (chunk0 + r) mod P
  bool adds = false;       // whether members add what they receive
};

// Per member: the time of a flow of a small and of a big chunk (its latency included), and of adding one.
struct RingFigures {
  std::vector<double> wire_small, wire_big, add_small, add_big;
};

// Advances `start` (each member's start of the first of `steps`) to each member's end of the last.
void ring_recurrence(std::vector<double>& start, const RingFigures& figures, std::span<const RingStep> steps,
                     std::size_t extra);

}  // namespace dts::sim
