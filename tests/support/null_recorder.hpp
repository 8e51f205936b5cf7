// A Recorder that records nothing, for tests that drive the seam by hand.
#pragma once

#include "algorithms/api/recorder.hpp"

namespace dts::test {

class NullRecorder final : public Recorder {
 public:
  void step(std::int64_t, float) override {}
  bool eval_due(std::int64_t) const override { return false; }
  void evaluate(std::int64_t, ConstSlice, bool) override {}
};

}  // namespace dts::test
