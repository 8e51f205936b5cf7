// GridMaster: the layout's lines, the messages about them, and the loop on rank 0.
#include "algorithms/bidmach/grid_master.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "algorithms/bidmach/dimension_loop.hpp"

namespace dts::bidmach {
namespace {

constexpr Round kMaxVersion = (1u << 12) - 1;  // a round travels as version << 20 | round (dimension_loop.cpp)

float exact(long v) {
  DTS_ASSERT(v >= -1 && v < (1L << 24), "bidmach: a number beyond exact floats");
  return static_cast<float>(v);
}

// The largest difference between two rows' populations, or two columns'.
int imbalance(const GridLayout& g) {
  int worst = 0;
  for (const Dim d : {Dim::kRow, Dim::kColumn}) {
    int lo = g.nodes(), hi = 0;
    for (int i = 0; i < g.side(); ++i) {
      const int n = static_cast<int>(g.line(d, i).size());
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    if (g.side() > 0) worst = std::max(worst, hi - lo);
  }
  return worst;
}

// Waits for a message that may be as far off as the end of training (kPatienceSliceS).
void wait_long(Request& r) {
  while (r.wait(kPatienceSliceS) == Status::kTimeout) {
  }
  r.wait_ok();  // completed: its status at once
}

}  // namespace

Line GridView::line(Rank node, int dim) const {
  const std::optional<Cell> c = layout.cell(node);
  if (!c) return {};
  Line l;
  if (dims == 1) {
    if (dim == 0) l = {nodes(), 0};
  } else if (dims > 2) {
    const std::vector<Rank> all = nodes();
    const auto n = static_cast<long>(all.size());
    const long idx = std::lower_bound(all.begin(), all.end(), node) - all.begin();
    long side = 1, stride = 1;
    while (std::pow(static_cast<double>(side), dims) < static_cast<double>(n)) ++side;
    for (int a = 0; a < dim; ++a) stride *= side;
    const long coord = idx / stride % side;
    for (long k = 0; k < side; ++k) {
      const long j = idx + (k - coord) * stride;
      if (j < n) l.members.push_back(all[static_cast<std::size_t>(j)]);
    }
    l.master = l.members.front();
  } else {
    const auto d = static_cast<Dim>(dim);
    const int i = d == Dim::kRow ? c->row : c->col;
    l = {layout.line(d, i), layout.line_master(d, i)};
  }
  if (l.members.size() < 2) return {};
  return l;
}

std::vector<Rank> GridView::nodes() const {
  std::vector<Rank> all;
  for (int r = 0; r < layout.side(); ++r) {
    for (int c = 0; c < layout.side(); ++c) {
      if (layout.at(r, c) >= 0) all.push_back(layout.at(r, c));
    }
  }
  std::sort(all.begin(), all.end());
  return all;
}

GridView initial_grid(int ranks, int dims, const std::vector<Rank>& later) {
  GridView g;
  g.dims = dims;
  for (Rank r = 0; r < ranks; ++r) {
    if (!std::binary_search(later.begin(), later.end(), r)) g.layout.join(r);
  }
  return g;
}

void tell_grid_master(Comm& comm, NodeNews news) {
  const float v = static_cast<float>(news);
  comm.isend(0, tags::kBidmachGrid, ConstSlice(std::span<const float>(&v, 1))).wait_ok();
}

std::size_t order_floats(int ranks) { return 4 + static_cast<std::size_t>(ranks); }

std::vector<float> encode(const LineOrder& order, int ranks) {
  std::vector<float> m(order_floats(ranks), -1.0f);
  m[0] = static_cast<float>(order.kind);
  m[1] = exact(order.version);
  m[2] = exact(order.line.master);
  m[3] = exact(static_cast<long>(order.line.members.size()));
  std::transform(order.line.members.begin(), order.line.members.end(), m.begin() + 4, [](Rank r) { return exact(r); });
  return m;
}

LineOrder decode_order(ConstSlice message) {
  const float* m = message.data.data();
  LineOrder o;
  o.kind = static_cast<LineOrder::Kind>(static_cast<int>(m[0]));
  o.version = static_cast<Round>(m[1]);
  o.line.master = static_cast<Rank>(m[2]);
  const auto n = static_cast<std::size_t>(m[3]);
  for (std::size_t i = 0; i < n; ++i) o.line.members.push_back(static_cast<Rank>(m[4 + i]));
  return o;
}

void run_grid_master(Context& ctx, GridView grid) {
  Comm& comm = ctx.comm;
  const int ranks = comm.size();
  std::vector<Rank> everyone(static_cast<std::size_t>(ranks));
  std::iota(everyone.begin(), everyone.end(), 0);
  std::vector<Request> out;
  const auto order = [&](Rank to, int dim, const LineOrder& o) {
    const std::vector<float> m = encode(o, ranks);
    out.push_back(comm.isend(to, dim_tags(dim).config, ConstSlice(std::span<const float>(m))));
  };
  Round version = 0;
  std::int64_t relayouts = 0;
  int worst = imbalance(grid.layout);
  int finished = 0;  // ranks whose learner is done or has left
  Vec news(1, true);
  while (finished < ranks) {
    Request r = comm.irecv_any(everyone, tags::kBidmachGrid, news);
    wait_long(r);
    const Rank from = r.source();
    const auto what = static_cast<NodeNews>(static_cast<int>(news.data()[0]));
    if (what == NodeNews::kDone) {
      ++finished;
      continue;
    }
    DTS_ASSERT(what == NodeNews::kJoined || what == NodeNews::kLeaving, "bidmach: unexpected news for the GridMaster");
    const GridView before = grid;
    if (what == NodeNews::kJoined) {
      grid.layout.join(from);
    } else {
      grid.layout.leave(from);
      ++finished;
    }
    if (++version > kMaxVersion) throw CommError("bidmach: more than 4095 changes of the grid in one run");
    ++relayouts;
    worst = std::max(worst, imbalance(grid.layout));
    for (Rank node : grid.nodes()) {
      for (int d = 0; d < grid.dims; ++d) {
        const Line now = grid.line(node, d);
        if (before.layout.cell(node) && now == before.line(node, d)) continue;
        order(node, d, {LineOrder::kConfig, version, now});
      }
    }
    if (what == NodeNews::kLeaving) {
      for (int d = 0; d < grid.dims; ++d) order(from, d, {LineOrder::kOut, version, {}});
    }
  }
  const std::vector<Rank> members = grid.nodes();
  for (Rank node : members) {
    for (int d = 0; d < grid.dims; ++d) order(node, d, {LineOrder::kEnd, version, {}});
  }
  for (std::size_t stopped = 0; stopped < members.size(); ++stopped) {
    Request r = comm.irecv_any(members, tags::kBidmachGrid, news);
    r.wait_ok();
    DTS_ASSERT(static_cast<NodeNews>(static_cast<int>(news.data()[0])) == NodeNews::kStopped,
               "bidmach: news after the end");
  }
  std::vector<float> final_msg(static_cast<std::size_t>(ranks) + 1, -1.0f);
  final_msg[0] = exact(static_cast<long>(members.size()));
  std::transform(members.begin(), members.end(), final_msg.begin() + 1, [](Rank r) { return exact(r); });
  for (Rank r = 0; r < ranks; ++r)
    out.push_back(comm.isend(r, tags::kBidmachFinal, ConstSlice(std::span<const float>(final_msg))));
  for (Request& r : out) r.wait_ok();
  ctx.recorder.count("grid_relayouts", relayouts);
  if (grid.dims == 2) ctx.recorder.count("grid_imbalance_max", worst);
}

std::vector<Rank> final_members(Comm& comm) {
  Vec msg(static_cast<std::size_t>(comm.size()) + 1, true);
  Request r = comm.irecv(0, tags::kBidmachFinal, msg);
  wait_long(r);
  const float* m = msg.data().data();
  std::vector<Rank> members;
  for (int i = 0; i < static_cast<int>(m[0]); ++i) members.push_back(static_cast<Rank>(m[1 + i]));
  return members;
}

}  // namespace dts::bidmach
