// Pairwise exchange: both directions between two partners at once (a gossip step). Two messages, sent
// before receiving so that the send's snapshot is taken before the receive can write an aliased buffer.
#include "algorithms/collectives/collectives.hpp"

namespace dts::collectives {

void pairwise_exchange(Comm& comm, Rank peer, ConstSlice mine, Slice theirs, Tag tag, const SendOptions& opts) {
  DTS_ASSERT(mine.count == theirs.count, "pairwise_exchange: both directions carry the same count");
  DTS_ASSERT(peer != comm.rank(), "pairwise_exchange with oneself");
  if (CollectiveEngine* engine = comm.collective_engine()) {
    CollectiveCall call;
    call.op = CollectiveOp::kPairwiseExchange;
    call.self = comm.rank();
    call.peer = peer;
    call.data = theirs;
    call.send = mine;
    call.modeled_bytes = opts.modeled_bytes;
    call.tag = tag;
    engine->run(call);
    return;
  }
  Request tx = comm.isend(peer, tag, mine, opts);  // first: the send snapshots `mine`, which may alias `theirs`
  Request rx = comm.irecv(peer, tag, theirs);
  rx.wait_ok();
  tx.wait_ok();
}

}  // namespace dts::collectives
