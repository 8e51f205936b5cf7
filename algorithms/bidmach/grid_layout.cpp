// BIDMach's grid placement (papers/bidmach.md §6.2). Choices where the specification is open:
//   o "Most recently filled" is positional, as in the code: the last occupied cell of the current side's fill
//     order, whichever node joined last. After a compaction the grid is the full grid of the smaller side, so
//     the next leave empties that side's last fill cell.
//   o Empty diagonal cells (i,i), i < L-1: never produced here (they belong to no fill order of side L, and
//     the corner rule covers i = L-1); should one be empty, the line's first member is its master.
#include "algorithms/bidmach/grid_layout.hpp"

#include <stdexcept>

#include "core/errors.hpp"

namespace dts::bidmach {

Cell GridLayout::fill_cell(int k, int side) {
  DTS_ASSERT(side >= 1 && k >= 0 && k < 2 * side - 1, "fill_cell: k outside the side's fill order");
  const int s = side % 2 == 1 ? side - 1 : side - 2;  // even: the last pairs start on an odd k
  if (k < s) {
    const int row = k + 1;
    return {row, k % 2 == 0 ? row + 1 : row - 1};
  }
  if (k == s) return {side - 1, side - 1};
  const int row = k - (s + 1);
  return {row, k % 2 == 1 ? row + 1 : row - 1};
}

void GridLayout::move(Cell from, Cell to) {
  const int id = slot(from);
  DTS_ASSERT(slot(to) == -1, "grid move onto an occupied cell");
  slot(from) = -1;
  slot(to) = id;
  if (id != -1) where_[id] = to;
}

void GridLayout::resize(int side) {
  std::vector<int> next(static_cast<std::size_t>(side * side), -1);
  for (int r = 0; r < side_; ++r) {
    for (int c = 0; c < side_; ++c) {
      if (r < side && c < side) {
        next[static_cast<std::size_t>(r * side + c)] = slot({r, c});
      } else {
        DTS_ASSERT(slot({r, c}) == -1, "grid shrink drops an occupied cell");
      }
    }
  }
  cells_ = std::move(next);
  side_ = side;
}

void GridLayout::join(int id) {
  if (id < 0) throw std::invalid_argument("grid join: node id " + std::to_string(id) + " is negative");
  if (where_.count(id) != 0) throw std::invalid_argument("grid join: node " + std::to_string(id) + " is present");
  if (nodes() == side_ * side_) {  // full (or empty): grow; moves for i <= L-2, (L-1,L) being new and empty
    const int old = side_;
    resize(old + 1);
    for (int i = 0; i + 1 < old; ++i) {
      move({i, i + 1}, {i, old});
      move({i + 1, i}, {old, i});
    }
    filled_ = 0;
  }
  const Cell c = fill_cell(filled_++, side_);
  DTS_ASSERT(slot(c) == -1, "grid join onto an occupied fill cell");
  slot(c) = id;
  where_[id] = c;
}

void GridLayout::leave(int id) {
  const auto it = where_.find(id);
  if (it == where_.end()) throw std::invalid_argument("grid leave: node " + std::to_string(id) + " is absent");
  const Cell gone = it->second;
  const Cell last = fill_cell(--filled_, side_);
  const int moved = slot(last);
  slot(last) = -1;
  if (moved != id) {
    slot(gone) = moved;
    where_[moved] = gone;
  }
  where_.erase(id);
  if (filled_ > 0) return;
  // Compact: the last row and column hold only the nodes growth moved there, (i,L-1) and (L-1,i) for
  // i <= L-3; they go back to (i,i+1) and (i+1,i), and the smaller side is full.
  const int old = side_;
  for (int i = 0; i + 2 < old; ++i) {
    move({i, old - 1}, {i, i + 1});
    move({old - 1, i}, {i + 1, i});
  }
  resize(old - 1);
  filled_ = side_ == 0 ? 0 : 2 * side_ - 1;
}

std::optional<Cell> GridLayout::cell(int id) const {
  const auto it = where_.find(id);
  if (it == where_.end()) return std::nullopt;
  return it->second;
}

void GridLayout::check_index(int i) const {
  if (i < 0 || i >= side_) {
    throw std::out_of_range("grid index " + std::to_string(i) + " outside side " + std::to_string(side_));
  }
}

int GridLayout::at(int row, int col) const {
  check_index(row);
  check_index(col);
  return slot({row, col});
}

std::vector<int> GridLayout::line(Dim d, int i) const {
  check_index(i);
  std::vector<int> members;
  for (int j = 0; j < side_; ++j) {
    const int id = d == Dim::kRow ? slot({i, j}) : slot({j, i});
    if (id != -1) members.push_back(id);
  }
  return members;
}

int GridLayout::line_master(Dim d, int i) const {
  check_index(i);
  const int last = side_ - 1;
  int master = slot({i, i});
  if (i == last && master == -1) master = d == Dim::kRow ? slot({last, 0}) : slot({0, last});
  if (master != -1) return master;
  const std::vector<int> members = line(d, i);
  return members.empty() ? -1 : members.front();
}

std::string GridLayout::to_string() const {
  std::string out = "[";
  for (int r = 0; r < side_; ++r) {
    if (r > 0) out += "; ";
    for (int c = 0; c < side_; ++c) {
      if (c > 0) out += ' ';
      const int id = slot({r, c});
      out += id == -1 ? std::string(".") : std::to_string(id);
    }
  }
  return out + "]";
}

}  // namespace dts::bidmach
