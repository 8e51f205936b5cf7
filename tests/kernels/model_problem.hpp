// Test helper for kernels/model tests: a network with initialised parameters and a random minibatch
// (x ~ U(0, 1), labels uniform), all drawn from dts::Rng, plus the loss at arbitrary parameters.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/model/network.hpp"
#include "kernels/rng.hpp"
#include "tests/support/numeric.hpp"

namespace dts::model::test {

struct Problem {
  std::unique_ptr<Network> net;
  std::vector<float> params, grads;
  std::vector<float> x;         // (N, c, h, w)
  std::vector<std::int32_t> y;  // (N)
  int N = 0;
  std::uint64_t dropout_seed = 7;

  // One forward_backward into grads; returns the loss.
  float run() { return net->forward_backward(params, grads, x, y, N, dropout_seed); }
  // The loss at other parameters (grads left untouched).
  float loss_at(std::span<const float> p) {
    std::vector<float> scratch(p.size());
    return net->forward_backward(p, scratch, x, y, N, dropout_seed);
  }
};

inline Problem make_problem(const std::string& name, Backend b, int c, int h, int w, int classes, int N,
                            std::uint64_t seed) {
  Problem p;
  p.net = make_network(name, b, c, h, w, classes);
  p.params.resize(p.net->num_params());
  p.grads.resize(p.net->num_params());
  p.net->init_params(p.params, seed);
  p.N = N;
  Rng rng(seed, 0, "test/batch");
  p.x.resize(static_cast<std::size_t>(N) * c * h * w);
  for (auto& v : p.x) v = rng.uniform_f();
  for (int n = 0; n < N; ++n) p.y.push_back(static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes))));
  return p;
}

// The backends this build has.
inline std::vector<Backend> backends() {
#ifdef DTS_WITH_ONEDNN
  return {Backend::kRef, Backend::kOnednn};
#else
  return {Backend::kRef};
#endif
}

using dts::test::nmse;  // tests/support/numeric.hpp

}  // namespace dts::model::test
