// Actors with a stack size of their own. SimGrid's guard page below each stack costs an mprotect per actor
// start, whose TLB flush dominated message fidelity on a paravirtualized VM (one courier actor per
// message); run_simulation turns guard pages off there (contexts/guard-size:0), which makes SimGrid
// calloc every stack, so the many short-lived actors get small ones.
#pragma once

#include <functional>
#include <simgrid/s4u.hpp>
#include <string>

namespace dts::sim {

// A courier: blocks in sendto, then matches its message (copies run in leaf loops and OpenMP teams).
// Every test passed with 16 KiB and a guard page; twice that for the margin.
inline constexpr unsigned kCourierStackKiB = 32;
// A spawned activity (SimNode::spawn): a master's server or exchange running collectives and rules.
inline constexpr unsigned kActivityStackKiB = 1024;
// A rank runs the model's kernels. glibc serves a calloc of 32 MiB or more with a fresh mmap whatever its
// dynamic threshold, so the stack is committed as it is used, not zeroed whole (thousands of ranks).
inline constexpr unsigned kRankStackKiB = 32 * 1024;
// A rank of modeled numerics runs no kernel: its stack held at most 7.5 KiB in every algorithm of
// `dtsim bench scale` and every modeled run of the tests. Small stacks, one after the other in the heap, keep
// the page-table walks of context switches among thousands of ranks in the cache.
inline constexpr unsigned kModeledRankStackKiB = 256;

// Actor::create with a stack of `stack_kib` KiB, in one simcall as create's, so that the actors of one
// instant are scheduled exactly as with create.
simgrid::s4u::ActorPtr start_actor(const std::string& name, simgrid::s4u::Host* host, unsigned stack_kib,
                                   std::function<void()> code);

}  // namespace dts::sim
