// The two asynchronous worker loops: one numbered step per line of their listings (papers/easgd_hpc.md §4.2, §5.1).
#include "algorithms/async_workers.hpp"

#include "algorithms/elastic_update.hpp"

namespace dts {

void elastic_async_worker(Context& ctx, const ParamExchange& ex, Rank center_rank, const WorkerTags& tags, float alpha,
                          std::int64_t tau) {
  Compute& compute = ctx.compute;
  Vec x = compute.make_vec(), grad = compute.make_vec(), center = compute.make_vec();
  Slice diff = center;  // the elastic difference overwrites the received center, not needed after it
  compute.init_params(x);
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const bool exchange = step % tau == 0;
    Transfer center_rx;
    if (exchange) {
      center_rx = ex.irecv(ctx.comm, center_rank, tags.down, center);  // 1. send W^i, the center replies
      ex.send(ctx.comm, center_rank, tags.up, x);
    }
    const float loss = compute.forward_backward_then(x, grad, [&] {  // 2. gradient at W^i, overlapping the reply
      if (exchange) center_rx.wait_ok();
    });
    // 3. alpha (W^i - W~) from the pre-update W^i, 4. W^i -= eta dW^i (or the momentum step), 5. the elastic pull
    elastic_worker_update(compute, x, grad, center, diff, alpha, exchange);
    ctx.recorder.step(step + 1, loss);
  }
  ctx.comm.send(center_rank, tags.done, Vec(0, true));
}

void param_server_worker(Context& ctx, const ParamExchange& ex, Rank master_rank, const WorkerTags& tags) {
  Compute& compute = ctx.compute;
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);
  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const float loss = compute.forward_backward(params, grads);  // 1. dW_i at my copy of W
    ex.send(ctx.comm, master_rank, tags.up, grads);              // 2. push dW_i
    ex.recv(ctx.comm, master_rank, tags.down, params);           // 3. pull W, updated with it
    ctx.recorder.step(step + 1, loss);
  }
  ctx.comm.send(master_rank, tags.done, Vec(0, true));
}

}  // namespace dts
