// Calibration microbenchmarks (issue 19, README "Calibration"): the message patterns that `dtsim calibrate`
// fits the simulator's host-side costs to, run from one experiment file on both backends, so that the MPI run
// measures the figure and the simulated run predicts it. Ranks pair up (0-1, 2-3, ...; an odd last rank only
// takes part in the final step count). Each step, `messages` times in a row:
//   pingpong: the even rank sends `bytes` and its partner sends them back (a step is that many round trips);
//   exchange: both send `bytes` to each other at once (the two directions of one pair's connection);
//   overlap:  an exchange, and a forward-backward pass between posting it and waiting for it (the network's
//             and the compute's demands on the same cores);
//   update:   an elastic averaging worker's update, no message: alpha (x - center), the optimizer step, x minus
//             that (EASGD's rule 1: elastic_worker_update, as the EASGD workers run it): the cost of the update passes
//             on every rank, paired or not.
// Nothing is learned: the parameters stay at their initial values (the gradients stay zero, the center is the
// parameters), the loss rows carry the compute's loss.
#include <cmath>

#include "algorithms/algorithm.hpp"
#include "algorithms/elastic_update.hpp"

namespace dts {

AlgorithmSpec microbench_spec() {
  return {"microbench", "calibration microbenchmarks between pairs of ranks: pingpong, exchange, overlap, update",
          [](ConfigReader&, int workers) { return workers; },
          [](ConfigReader& r, int workers) -> RankMain {
            const std::string mode = r.choice("mode", "pingpong", {"pingpong", "exchange", "overlap", "update"});
            if (workers < 2 && mode != "update") {
              r.fail("workers", "microbench pairs ranks up: it needs at least 2 workers");
            }
            const double bytes = r.number("bytes", 1 << 20, 4, 1e10);
            if (std::fmod(bytes, 4) != 0) r.fail("bytes", "a whole number of floats (a multiple of 4)");
            const int messages = static_cast<int>(r.integer("messages", 1, 1, 1000000));
            const auto count = static_cast<std::size_t>(bytes / 4);
            return [mode, count, messages](Context& ctx) {
              Comm& comm = ctx.comm;
              Compute& compute = ctx.compute;
              const Rank me = comm.rank();
              const Rank partner = me % 2 == 0 ? me + 1 : me - 1;
              const bool paired = partner < comm.size();
              Vec out(count, compute.real()), in(count, compute.real());
              Vec params = compute.make_vec(), grads = compute.make_vec();
              compute.init_params(params);
              const bool update = mode == "update";
              const std::size_t rule_n = update ? compute.num_params() : 0;  // only update needs them
              Vec center(rule_n, compute.real()), diff(rule_n, compute.real());
              if (update) compute.init_params(center);
              for (std::int64_t step = 0; step < ctx.steps; ++step) {
                float loss = 0;
                for (int m = 0; m < messages && update; ++m) {
                  elastic_worker_update(compute, params, grads, center, diff, 0.1f, true);
                }
                for (int m = 0; m < messages && paired && !update; ++m) {
                  if (mode == "pingpong") {
                    if (me % 2 == 0) {
                      comm.send(partner, tags::kMicrobench, out);
                      comm.recv(partner, tags::kMicrobench, in);
                    } else {
                      comm.recv(partner, tags::kMicrobench, in);
                      comm.send(partner, tags::kMicrobench, out);
                    }
                    continue;
                  }
                  Request rx = comm.irecv(partner, tags::kMicrobench, in);
                  Request tx = comm.isend(partner, tags::kMicrobench, out);
                  if (mode == "overlap") loss = compute.forward_backward(params, grads);
                  tx.wait_ok();
                  rx.wait_ok();
                }
                if (!paired && mode == "overlap") loss = compute.forward_backward(params, grads);
                ctx.recorder.step(step + 1, loss);
              }
              if (me == 0) ctx.recorder.evaluate(ctx.steps, params, true);
            };
          }};
}

}  // namespace dts
