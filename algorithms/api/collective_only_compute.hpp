// A Compute for running collectives on their own (benches, tests): no model, no training. The collectives
// only call charge_elementwise, free here; override it to charge time for the additions.
#pragma once

#include "algorithms/api/compute.hpp"

namespace dts {

class CollectiveOnlyCompute : public Compute {
 public:
  explicit CollectiveOnlyCompute(std::size_t num_params = 0, bool real = true) : num_params_(num_params), real_(real) {}
  std::size_t num_params() const override { return num_params_; }
  bool real() const override { return real_; }
  std::vector<model::ParamBlock> param_blocks() const override { return {}; }
  void init_params(Slice) override {}
  float forward_backward(ConstSlice, Slice) override { return 0; }
  void optimizer_step(Slice, ConstSlice) override {}
  void charge_elementwise(std::size_t, int) override {}
  std::vector<Slice> optimizer_state() override { return {}; }
  std::vector<std::uint32_t> next_batch_rows() override { return {}; }
  void replace_last_batch_rows(std::span<const std::uint32_t>) override {}
  std::uint64_t raw_batch_bytes() const override { return 0; }
  void optimizer_step_range(Slice, ConstSlice, std::size_t, std::int64_t) override {}
  std::size_t take_over_shards(std::span<const int>, int, int) override { return 0; }

 private:
  std::size_t num_params_;
  bool real_;
};

}  // namespace dts
