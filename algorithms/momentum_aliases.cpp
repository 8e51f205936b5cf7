// The momentum methods of papers/easgd_hpc.md as names for their plain counterparts run with the momentum
// optimizer, which the runner reads from /algorithm/optimizer before the algorithm's own keys:
//   measgd_async  Async MEASGD (§5.2) = easgd_async. The worker's optimizer_step with kind "momentum" is
//                 b <- mu b + dW; W <- W - eta b (kernels/model/optimizer.hpp), i.e. V = -eta b of eq. (3)-(4)
//                 for a fixed learning rate; easgd_async takes the elastic term from the pre-update W^i_t
//                 and the center W~_t sent before the center's own update, so the worker does eq. (5)-(6)
//                 exactly and the center the single-worker form of eq. (2).
//   async_msgd    Async MSGD (§4.3) = async_sgd, whose master keeps V and applies eq. (3)-(4) to each
//                 incoming gradient (the resolution of §12: momentum lives on the master).
// Both refuse any other optimizer kind: with "sgd" they would silently be their counterpart, and with
// "nesterov" the worker would run Zhang et al.'s EAMSGD instead. With lr_policy "inv", the PyTorch form
// scales the whole buffer by the current rate, where eq. (3) accumulates past rates: equal only for "fixed".
#include <string>

#include "algorithms/algorithm.hpp"

namespace dts {

AlgorithmSpec easgd_async_spec();
AlgorithmSpec async_sgd_spec();

namespace {

AlgorithmSpec with_momentum(AlgorithmSpec base, std::string name, std::string summary) {
  base.name = std::move(name);
  base.summary = std::move(summary);
  base.configure = [configure = base.configure, n = base.name](ConfigReader& r, int workers) -> RankMain {
    const std::string kind = r.has("optimizer") ? r.raw("optimizer").value("kind", "sgd") : "sgd";
    if (kind != "momentum") r.fail("optimizer/kind", n + " needs optimizer kind \"momentum\", not \"" + kind + "\"");
    return configure(r, workers);
  };
  return base;
}

}  // namespace

AlgorithmSpec measgd_async_spec() {
  return with_momentum(easgd_async_spec(), "measgd_async",
                       "Async MEASGD: easgd_async with the momentum optimizer on the workers (eq. 5-6)");
}

AlgorithmSpec async_msgd_spec() {
  return with_momentum(async_sgd_spec(), "async_msgd",
                       "Async MSGD: async_sgd with the momentum optimizer on the master (eq. 3-4)");
}

}  // namespace dts
