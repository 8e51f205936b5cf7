// enter_run (algorithm.hpp): a scenario's joins and leaves as the algorithm sees them.
#include <algorithm>

#include "algorithms/algorithm.hpp"

namespace dts {

void enter_run(Context& ctx, const Scenario* scenario) {
  if (scenario == nullptr) return;
  const Rank me = ctx.comm.rank();
  for (const Restart& r : scenario->restarts) {
    if (r.rank != me) continue;
    ctx.crash_at_s = r.at_s;
    ctx.restart_after_s = r.restart_after_s;
  }
  if (scenario->joins.empty() && scenario->leaves.empty()) return;
  ctx.membership_changes = true;
  double join_at_s = 0;
  for (const RankEvent& j : scenario->joins) {
    ctx.joining.push_back(j.rank);
    if (j.rank == me) join_at_s = j.at_s;
  }
  std::sort(ctx.joining.begin(), ctx.joining.end());
  for (const RankEvent& l : scenario->leaves) {
    if (l.rank == me) ctx.leave_at_s = l.at_s;
  }
  const double wait_s = join_at_s - ctx.comm.now_s();
  if (wait_s > 0) ctx.node.sleep_for(wait_s);
}

}  // namespace dts
