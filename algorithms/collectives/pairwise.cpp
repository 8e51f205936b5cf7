// Pairwise exchange: both directions between two partners at once (a gossip step). Two messages in a stage that
// sends first: the receive may write an aliased buffer, so it lands apart until the send is done (run_plan).
#include <algorithm>

#include "algorithms/collectives/collectives.hpp"
#include "algorithms/collectives/plans.hpp"

namespace dts::collectives {

PlanStage PairwisePlan::stage(int member, int) const {
  PlanStage st;
  st.sends.push_back({.peer = 1 - member, .chunk = {0, n_}, .from_input = true});
  st.recvs.push_back({.peer = 1 - member, .chunk = {0, n_}});
  st.sends_first = true;
  return st;
}

void pairwise_exchange(Comm& comm, Rank peer, ConstSlice mine, Slice theirs, Tag tag,
                       std::optional<std::uint64_t> modeled_bytes) {
  DTS_ASSERT(mine.count == theirs.count, "pairwise_exchange: both directions carry the same count");
  DTS_ASSERT(peer != comm.rank(), "pairwise_exchange with oneself");
  const Group pair({std::min(comm.rank(), peer), std::max(comm.rank(), peer)});
  PlanOptions o;
  o.send = mine;
  o.modeled_bytes = modeled_bytes;
  run_plan(comm, nullptr, pair, PairwisePlan(theirs.count), theirs, tag, o);
}

}  // namespace dts::collectives
