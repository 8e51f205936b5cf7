// The `mpca` algorithm's keys (README "Algorithms") and its rank layout.
#include "algorithms/mpca/mpca.hpp"

namespace dts {

namespace mpca {
ShardLayout shard_layout(const Compute& compute, const Config& cfg) {
  return ShardLayout(cfg.split, cfg.shards, compute.num_params(), compute.param_blocks());
}
}  // namespace mpca

AlgorithmSpec mpca_spec() {
  AlgorithmSpec spec{
      "mpca", "MPCA SGD: a driver on rank 0 reduces, prepares and broadcasts model shards in a pipeline",
      [](ConfigReader&, int workers) { return workers + 1; },
      [](ConfigReader& r, int) -> RankMain {
        mpca::Config cfg;
        cfg.shards = static_cast<int>(r.integer("shards", 3, 1, 64));
        cfg.phases = static_cast<int>(r.integer("phases", 3, 1, 3));
        if (cfg.phases > cfg.shards) {
          throw ConfigError(r.where("phases"), "the " + std::to_string(cfg.phases) + "-phase pipeline needs at least " +
                                                   std::to_string(cfg.phases) + " shards (shards is " +
                                                   std::to_string(cfg.shards) + ")");
        }
        if (r.choice("shard_split", "even", {"even", "largest_layer"}) == "largest_layer") {
          cfg.split = mpca::Split::kLargestLayer;
          if (cfg.shards != 2) {
            throw ConfigError(r.where("shard_split"),
                              "\"largest_layer\" makes 2 shards (the largest layer and the "
                              "rest); shards is " +
                                  std::to_string(cfg.shards));
          }
        }
        cfg.weighted = r.boolean("weighted", true);
        cfg.chunk_floats = static_cast<std::size_t>(r.integer("chunk_floats", 1 << 20, 1, 1'000'000'000));
        cfg.reserve = r.boolean("reserve_chunks", true);
        cfg.delta = r.number("delta", 0.8, 0.0, 1.0);
        cfg.displace = r.choice("penalty", "displace", {"displace", "gradient"}) == "displace";
        mpca::Schedules& s = cfg.schedules;
        s.shards = cfg.shards;
        s.gamma = r.number("gamma", 0.7, 0.0, 10.0);
        s.gamma_ramp_cycles = r.integer("gamma_ramp_cycles", 0, 0, 1'000'000);
        s.beta = r.number("beta", 0.9, 1e-6, 1.0);
        s.beta_ramp_cycles = r.integer("beta_ramp_cycles", 20, 0, 1'000'000);
        s.alpha = r.number("alpha", 0.05, 0.0, 1.0);
        s.alpha_high = r.number("alpha_high", 0.5, 0.0, 1.0);
        s.alpha_zero_rounds = r.number("alpha_zero_rounds", 3, 0, 1e6);
        s.alpha_high_rounds = r.number("alpha_high_rounds", 1, 0, 1e6);
        s.alpha_decay_rounds = r.number("alpha_decay_rounds", 5, 0, 1e6);
        cfg.spark = mpca::read_spark_overheads(r, /*prepare=*/true);
        cfg.checkpoint = mpca::read_checkpoint(r);
        return [cfg](Context& ctx) {
          if (ctx.comm.rank() == mpca::kDriver) {
            mpca::driver(ctx, cfg);
          } else {
            mpca::worker(ctx, cfg);
          }
        };
      }};
  spec.restarts = true;  // the driver restarts from its last backup (driver.cpp, restart)
  return spec;
}

}  // namespace dts
