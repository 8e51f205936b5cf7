// BIDMach's GridMaster (papers/bidmach.md §6-7) for runs whose membership changes: on rank 0, beside its node,
// it keeps the grid's layout (GridLayout), and on every join or leave re-lays it out under a new version and
// sends each node whose line changed, per dimension, its new line (members and LineMaster). A node adopts a
// version by force-completing the rounds it runs under the old one (dimension_loop.hpp). Deviation: the
// GridMaster tells every node of a changed line directly rather than through its LineMaster; the messages are
// the same in number up to the LineMaster's own.
// End of a run: once every rank's learner is done or has left, it sends End to every node's dimensions (their
// LineMasters stop once every round they started has completed), waits for every node's loops to stop, then
// sends every rank, members and leavers, the members of the final average. A leaver waits for that message so
// that on MPI its messages of rounds it gave up are still taken (and dropped) until no peer sends them any more.
#pragma once

#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/bidmach/grid_layout.hpp"

namespace dts::bidmach {

// A node's line in one dimension: its members (the node among them) and their LineMaster; empty when the node
// is alone or out of the grid.
struct Line {
  std::vector<Rank> members;
  Rank master = -1;
  friend bool operator==(const Line&, const Line&) = default;
};

inline constexpr int kMaxDims = 4;

// The lines of a layout: dims 2, the grid's rows and columns; dims 1, one line of every node mastered by rank 0;
// dims 3 and 4 (§14's d-dimensional grid, which BIDMach never built): the nodes in ascending order fill a grid of
// side ceil(n^(1/d)) in row-major order, a line is the nodes that differ in one coordinate only, mastered by
// its first; the GridLayout then only holds who is in the grid.
struct GridView {
  GridLayout layout;
  int dims = 2;
  Line line(Rank node, int dim) const;
  std::vector<Rank> nodes() const;  // ascending
};
// The layout of `ranks` ranks joining in rank order, except the `later` ones.
GridView initial_grid(int ranks, int dims, const std::vector<Rank>& later);

// What a node tells the GridMaster (tag kBidmachGrid, one float).
enum class NodeNews : int { kJoined = 0, kLeaving = 1, kDone = 2, kStopped = 3 };
void tell_grid_master(Comm& comm, NodeNews news);

// What the GridMaster tells a node's dimension (tag kBidmachConfigRow + dim).
struct LineOrder {
  enum Kind : int { kConfig = 0, kOut = 1, kEnd = 2 };
  Kind kind = kConfig;
  Round version = 0;  // kConfig: the line's version
  Line line;          // kConfig: the line from this version on
};
// The receive buffer's size in a world of `ranks`.
std::size_t order_floats(int ranks);
std::vector<float> encode(const LineOrder& order, int ranks);
LineOrder decode_order(ConstSlice message);

// The GridMaster's loop (rank 0, an activity of its own); returns once it has sent the final members. Reports
// (Recorder::count) re-layouts and the largest row or column imbalance after any of them.
void run_grid_master(Context& ctx, GridView grid);

// Waits for the GridMaster's final message: the members of the final average, ascending.
std::vector<Rank> final_members(Comm& comm);

}  // namespace dts::bidmach
