// ps_sharded, the MXNet baseline of the MPCA paper (papers/mpca_sgd.md §5.4), is ps_async under another name:
// every one of the K workers is also the server of its share of the model (a co-located sharded parameter
// server, MXNet's kvstore keys spread or sliced over the servers, algorithms/ps_sharding.hpp), asynchronous
// mode, and each iteration a worker pushes its gradient's pieces to every server and pulls their new values,
// so that (K-1)/K of the model crosses its NIC each way (its own server's share stays on the host). The
// paper's runs used MXNet's async mode; ps_sync is the synchronous mode of the same server.
#include "algorithms/algorithm.hpp"

namespace dts {

AlgorithmSpec ps_async_spec();

AlgorithmSpec ps_sharded_spec() {
  AlgorithmSpec spec = ps_async_spec();
  spec.name = "ps_sharded";
  spec.summary = "the MPCA paper's MXNet baseline (§5.4): ps_async, a sharded parameter server on every worker";
  return spec;
}

}  // namespace dts
