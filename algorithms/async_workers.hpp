// The worker side of the master-worker asynchronous algorithms, shared by their FCFS and Hogwild masters:
//   elastic (easgd_async, measgd_async, easgd_hogwild): every tau local steps, send W^i to the center, compute
//     the gradient while the center's reply travels, and take eq. (1) with the pre-update W^i and the center
//     as it was when it replied: W^i <- W^i - eta dW^i - alpha (W^i - W~) (with momentum: eq. 5-6);
//   parameter server (async_sgd, async_msgd, hogwild_sgd): push dW_i, pull the updated W (Dean et al.).
// After the last step a worker tells its master it is done (a zero-length message).
#pragma once

#include <cstdint>

#include "algorithms/algorithm.hpp"
#include "algorithms/param_exchange.hpp"

namespace dts {

struct WorkerTags {
  Tag up;    // worker -> master: W^i (elastic) or dW_i (parameter server)
  Tag down;  // master -> worker: W~ or W
  Tag done;  // worker -> master: no more exchanges
};

void elastic_async_worker(Context& ctx, const ParamExchange& ex, Rank center_rank, const WorkerTags& tags, float alpha,
                          std::int64_t tau);
void param_server_worker(Context& ctx, const ParamExchange& ex, Rank master_rank, const WorkerTags& tags);

}  // namespace dts
