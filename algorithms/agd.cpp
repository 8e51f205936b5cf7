// AGD, the GossipGraD paper's main baseline (papers/gossipgrad.md §3.2): synchronous SGD whose gradient
// allreduce runs layer by layer, each layer's as soon as back-propagation has produced it
// (Compute::forward_backward_hooked, layer_ready), so that it overlaps the backward pass of the layers before it.
// As the authors' code: one communication thread takes the layers in the order they become ready and runs a
// blocking allreduce (SUM) of each; the sum is divided by P when applied. The thread is an activity that
// runs while layers wait (LayerQueue): at most one allreduce in flight, in queue order, exactly as one thread
// popping a queue (Node has no condition variable to wait on a queue with). Mathematically allreduce_sgd: with the same
// allreduce, the tree and hypercube sum each float in the same order whatever the slice, so the models are equal bit
// for bit; a ring splits each layer into its own chunks, hence its own order of the additions (equal at P = 2, to
// rounding above). "AGD every log(p) steps" (§3.3, average_every): local optimizer steps, and an allreduce average of
// the weights every k steps and after the last one (momentum buffers stay local). The paper's learning rate for AGD is
// the single-device rate x sqrt(P) (lr_scale, applied by the runner).
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>

#include "algorithms/algorithm.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "algorithms/rules/vector_ops.hpp"

namespace dts {
namespace {

struct AgdConfig {
  collectives::AllreduceAlgo allreduce = collectives::AllreduceAlgo::kRing;
  bool hierarchical = false;  // hierarchical ring over nodes of ranks_per_node workers
  int ranks_per_node = 1;
  std::int64_t average_every = 0;  // 0: gradients every step; k: weights every k steps
};

void sum_over(const AgdConfig& cfg, Context& ctx, const Group& everyone, Slice data, Tag tag) {
  if (cfg.hierarchical) {
    collectives::hierarchical_ring_allreduce(ctx.comm, ctx.compute, everyone, cfg.ranks_per_node, data, tag);
  } else {
    collectives::allreduce(cfg.allreduce, ctx.comm, ctx.compute, everyone, data, tag);
  }
}

// The communication thread's queue. A layer that finds no activity draining it starts one, which sums the layers
// in order until none waits, then ends: one activity per burst of layers, where an activity per layer held the
// stacks of a whole backward pass at once (1 MiB each; 107 layers of ResNet-50 on every rank).
class LayerQueue {
 public:
  LayerQueue(const AgdConfig& cfg, Context& ctx, const Group& everyone)
      : cfg_(cfg), ctx_(ctx), everyone_(everyone), lock_(ctx.node.make_mutex()) {}
  LayerQueue(const LayerQueue&) = delete;
  LayerQueue& operator=(const LayerQueue&) = delete;

  // From the rank's own activity.
  void push(Slice layer) {
    std::unique_ptr<Activity> ended;
    {
      const std::lock_guard<Mutex> hold(*lock_);
      pending_.push_back(layer);
      if (draining_) return;
      draining_ = true;
      ended = std::move(drainer_);  // found the queue empty and ends (or has ended)
    }
    if (ended) ended->join();
    drainer_ = ctx_.node.spawn("agd-allreduce", [this] { drain(); });
  }
  // Waits until every layer pushed is summed.
  void finish() {
    if (drainer_) drainer_->join();
    drainer_.reset();
  }

 private:
  void drain() {
    for (;;) {
      Slice layer;
      {
        const std::lock_guard<Mutex> hold(*lock_);
        if (pending_.empty()) {
          draining_ = false;
          return;
        }
        layer = pending_.front();
        pending_.pop_front();
      }
      sum_over(cfg_, ctx_, everyone_, layer, tags::kAgdLayer);
    }
  }

  const AgdConfig& cfg_;
  Context& ctx_;
  const Group& everyone_;
  std::unique_ptr<Mutex> lock_;
  std::deque<Slice> pending_;
  bool draining_ = false;
  std::unique_ptr<Activity> drainer_;
};

// One step of layer-wise AGD: grads ends as the sum over the workers.
float layerwise_step(LayerQueue& queue, const std::vector<model::GradLayer>& layers, Compute& compute,
                     ConstSlice params, Slice grads) {
  Compute::StepHooks hooks;
  hooks.layer_ready = [&](std::size_t l) { queue.push(grads.sub(layers[l].offset, layers[l].count)); };
  const float loss = compute.forward_backward_hooked(params, grads, hooks);
  queue.finish();  // after the backward pass: wait for the last layer's allreduce
  return loss;
}

void agd_rank(Context& ctx, const AgdConfig& cfg) {
  Compute& compute = ctx.compute;
  const Group everyone = Group::range(0, ctx.comm.size());
  const auto layers = model::grad_layers(compute.param_blocks());
  Vec params = compute.make_vec(), grads = compute.make_vec();
  compute.init_params(params);  // same seed, same model on every rank
  const float inv_p = 1.0f / static_cast<float>(everyone.size());
  LayerQueue queue(cfg, ctx, everyone);
  if (ctx.comm.rank() == 0 && ctx.recorder.eval_due(0)) ctx.recorder.evaluate(0, params);

  for (std::int64_t step = 0; step < ctx.steps; ++step) {
    const bool last = step + 1 == ctx.steps;
    float loss = 0;
    if (cfg.average_every == 0) {
      loss = layerwise_step(queue, layers, compute, params, grads);  // 1-2. gradients, summed per layer
      rules::scale(grads, inv_p);                                    // 3. average
      compute.charge_elementwise(grads.count(), 2);
      compute.optimizer_step(params, grads);  // 4. identical update everywhere
    } else {
      loss = compute.forward_backward(params, grads);  // 1. a local step
      compute.optimizer_step(params, grads);
      if ((step + 1) % cfg.average_every == 0 || last) {  // 2. every k steps, the mean of the weights
        sum_over(cfg, ctx, everyone, params, tags::kAgdAverage);
        rules::scale(params, inv_p);
        compute.charge_elementwise(params.count(), 2);
      }
    }
    ctx.recorder.step(step + 1, loss);
    if (cfg.average_every > 0 && (last || ctx.recorder.eval_due(step + 1))) {
      ctx.recorder.observe(step + 1, params);  // local steps: the replicas differ between the averages
    }
    if (ctx.comm.rank() == 0 && (last || ctx.recorder.eval_due(step + 1))) {
      ctx.recorder.evaluate(step + 1, params, last);  // rank 0's model (after the last step, everyone's)
    }
  }
}

// average_every: absent (gradients every step), "log_p" (ceil(log2 P) steps, at least 1) or a count.
std::int64_t read_average_every(ConfigReader& r, int workers) {
  if (!r.has("average_every")) {
    r.resolved()["average_every"] = "never";
    return 0;
  }
  const nlohmann::json& v = r.raw("average_every");
  std::int64_t k = 0;
  if (v.is_string() && v.get<std::string>() == "log_p") {
    k = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(std::log2(static_cast<double>(workers)))));
  } else if (v.is_string() && v.get<std::string>() == "never") {
    k = 0;
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 1 && v.get<std::int64_t>() <= (std::int64_t{1} << 40)) {
    k = v.get<std::int64_t>();
  } else {
    r.fail("average_every", "expected \"never\", \"log_p\" or a number of steps >= 1");
  }
  r.resolved()["average_every"] = v;
  if (k > 0) r.resolved()["average_every_steps"] = k;
  return k;
}

}  // namespace

AlgorithmSpec agd_spec() {
  AlgorithmSpec spec{"agd", "SGD with a layer-wise allreduce overlapping back-propagation (GossipGraD's AGD baseline)",
                     [](ConfigReader&, int workers) { return workers; },
                     [](ConfigReader& r, int workers) -> RankMain {
                       AgdConfig cfg;
                       const std::string algo =
                           r.choice("allreduce", "ring", {"ring", "tree", "hypercube", "auto", "hierarchical_ring"});
                       cfg.hierarchical = algo == "hierarchical_ring";
                       if (!cfg.hierarchical)
                         cfg.allreduce = collectives::parse_allreduce_algo(algo, r.where("allreduce"));
                       cfg.ranks_per_node = static_cast<int>(r.integer("ranks_per_node", 1, 1, 1 << 20));
                       if (workers % cfg.ranks_per_node != 0) {
                         r.fail("ranks_per_node", std::to_string(cfg.ranks_per_node) + " does not divide the " +
                                                      std::to_string(workers) + " workers");
                       }
                       r.choice("progress", "thread", {"thread"});  // the code's communication thread (§3.2)
                       cfg.average_every = read_average_every(r, workers);
                       return [cfg](Context& ctx) { agd_rank(ctx, cfg); };
                     }};
  spec.lr_factor = [](ConfigReader& r, int workers) {
    return r.choice("lr_scale", "sqrt_p", {"sqrt_p", "none"}) == "sqrt_p" ? std::sqrt(static_cast<double>(workers))
                                                                          : 1.0;
  };
  return spec;
}

}  // namespace dts
