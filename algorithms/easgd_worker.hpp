// The worker side shared by the asynchronous elastic algorithms (easgd_async, measgd_async, easgd_hogwild):
// every tau local steps, send W^i to the center, compute the gradient while the center's reply travels, and
// take eq. (1) with the pre-update W^i and the center as it was when it replied:
//   W^i <- W^i - eta dW^i - alpha (W^i - W~)        (with the momentum optimizer: eq. 5-6)
// After the last step the worker tells the center it is done (a zero-length message).
#pragma once

#include <cstdint>

#include "algorithms/algorithm.hpp"
#include "algorithms/param_exchange.hpp"

namespace dts {

struct ElasticTags {
  Tag weights;  // worker -> center: W^i
  Tag center;   // center -> worker: W~
  Tag done;     // worker -> center: no more exchanges
};

void elastic_async_worker(Context& ctx, const ParamExchange& ex, Rank center_rank, const ElasticTags& tags,
                          float alpha, std::int64_t tau);

}  // namespace dts
