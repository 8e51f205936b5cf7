// BIDMach's grid placement (papers/bidmach.md §2, §6.2; the code's Dynamic2DGridLayout): n nodes in an L x L
// grid, L = ceil(sqrt n), row populations within 1 of each other and so column populations, through any
// sequence of joins and leaves. What to notice: the set of occupied cells depends on n alone (a leave swaps
// the departing node into the last cell of the fill order and clears that), so balance is a property of the
// join-order layouts; only which node sits where depends on history. Pure logic: the GridMaster keeps one and
// turns its changes into LineMaster configurations.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dts::bidmach {

struct Cell {
  int row = -1, col = -1;
  friend bool operator==(const Cell&, const Cell&) = default;
};

enum class Dim : int { kRow = 0, kColumn = 1 };

class GridLayout {
 public:
  // A node joins (ids unique, >= 0, else std::invalid_argument). On a full grid (n = L^2) the side grows to
  // L+1, the occupants of (i,i+1) and (i+1,i) moving to (i,L) and (L,i); the node takes the next free cell of
  // the new side's fill order (fill_cell).
  void join(int id);
  // A node leaves (std::invalid_argument naming the id if absent). It swaps with the occupant of the most
  // recently filled cell, which is then cleared; when the side's fill counter reaches 0 the grid compacts to
  // L-1 by reversing the growth move.
  void leave(int id);

  int nodes() const { return static_cast<int>(where_.size()); }
  int side() const { return side_; }  // ceil(sqrt(nodes())), 0 for no nodes
  std::optional<Cell> cell(int id) const;
  // Node id at (row, col), or -1 for an empty cell; std::out_of_range outside [0, side()).
  int at(int row, int col) const;
  // Row i's members ordered by column, or column i's ordered by row; std::out_of_range outside [0, side()).
  std::vector<int> line(Dim d, int i) const;
  // The line's LineMaster (§6.2): the node at the diagonal cell (i,i); when the corner (L-1,L-1) is empty,
  // row L-1 is mastered by (L-1,0) and column L-1 by (0,L-1). -1 for an empty line.
  int line_master(Dim d, int i) const;
  // "[0 2; 3 1]": rows separated by "; ", '.' for an empty cell, "[]" for no nodes.
  std::string to_string() const;

  // The k-th cell (0 <= k < 2*side-1) filled after growing to `side`, §6.2's fixed order:
  // (1,2),(2,1),(3,4),(4,3),... (s cells: side-1 for odd side, side-2 for even), then the corner
  // (side-1,side-1), then (0,1),(1,0),(2,3),(3,2),... For side 1 the single cell (0,0).
  static Cell fill_cell(int k, int side);

 private:
  int& slot(Cell c) { return cells_[static_cast<std::size_t>(c.row * side_ + c.col)]; }
  int slot(Cell c) const { return cells_[static_cast<std::size_t>(c.row * side_ + c.col)]; }
  void move(Cell from, Cell to);  // the occupant (if any) of `from` to the empty cell `to`
  void resize(int side);          // keeps the cells both sides have
  void check_index(int i) const;

  int side_ = 0;
  int filled_ = 0;          // cells of the current side's fill order occupied: fill_cell(0..filled_-1, side_)
  std::vector<int> cells_;  // side_ x side_, row-major, -1 empty
  std::unordered_map<int, Cell> where_;
};

}  // namespace dts::bidmach
