// Whole-network gradient checks of the ref backend (float: the network has no double path), and agreement of
// the oneDNN backend with ref on every model. The ref kernels are checked one by one in double elsewhere; here
// we catch wiring errors (offsets, buffers, skipped or misplaced data gradients, dropout masks), which give
// gross errors, so float checks with loose tolerances suffice (see the tolerance comment below).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "kernels/model/network.hpp"
#include "model_problem.hpp"

using namespace dts::model;

namespace {

struct Diff {
  double measured = 0, predicted = 0;
  double rel() const { return std::abs(measured - predicted) / std::max(std::abs(predicted), 1e-30); }
};

// Loss change between p + h*dir and p - h*dir (dir over one block), against the first-order prediction
// g . (p+ - p-) computed from the float parameters actually used, so rounding of p +- h*dir costs nothing.
Diff along(test::Problem& p, const ParamBlock& b, std::span<const float> dir, double h) {
  auto pp = p.params, pm = p.params;
  Diff d;
  for (std::size_t i = 0; i < b.size; ++i) {
    const std::size_t k = b.offset + i;
    pp[k] = static_cast<float>(p.params[k] + h * dir[i]);
    pm[k] = static_cast<float>(p.params[k] - h * dir[i]);
    d.predicted += double(p.grads[k]) * (double(pp[k]) - pm[k]);
  }
  d.measured = double(p.loss_at(pp)) - p.loss_at(pm);
  return d;
}

// One coordinate by central difference, with one-sided differences to detect a kink (ReLU, max-pool argmax)
// inside [p - e, p + e]: there the central difference is meaningless and the coordinate is skipped.
struct CoordCheck {
  double analytic, central;
  bool kink;
};
CoordCheck coordinate(test::Problem& p, std::size_t k, float e, float loss0) {
  auto q = p.params;
  q[k] = p.params[k] + e;
  const double up = double(q[k]) - p.params[k], lp = p.loss_at(q);
  q[k] = p.params[k] - e;
  const double dn = double(p.params[k]) - q[k], lm = p.loss_at(q);
  const double fwd = (lp - loss0) / up, bwd = (loss0 - lm) / dn, central = (lp - lm) / (up + dn);
  return {p.grads[k], central, std::abs(fwd - bwd) > 0.1 * std::abs(central)};
}

/* Tolerances. Steps e = 2e-3 (for a block direction: a step of length e along the block's unit gradient).
 *   o Float noise of the loss (~2.3, sums of up to 1024 terms) is ~1e-8..1e-7, i.e. <= 1e-4 absolute after
 *     dividing by 2e (hence the absolute term below); a block direction changes the loss by 2e*|g_block|,
 *     at least 4e-5 here (cifar10_quick's conv layers), so noise stays below 1e-2 of it.
 *   o The smooth part of the truncation error is O(e^2) (~1e-5 relative). The real limit is kinks (ReLU,
 *     max-pool argmax) crossed inside [p - e, p + e]: an O(e) relative error when rare (a coordinate with a
 *     kink at the centre is detected by one-sided differences and skipped; at most 1 in 4 may be).
 *   o Observed with these seeds: block directions <= 6e-3 relative; coordinates median <= 3e-3, worst 3.7e-2
 *     (cifar10_quick conv3.bias, a ReLU kink near the edge of the step).
 * Hence 5e-2 relative for block directions and 1e-1 relative + 2e-4 absolute for coordinates. A wiring error
 * (wrong block, missing or doubled data gradient, wrong dropout mask) gives O(1) relative errors. */
void gradcheck(const std::string& name, int c, int h, int w, int N, int coords_per_block, float e) {
  auto p = test::make_problem(name, Backend::kRef, c, h, w, 10, N, 11);
  const float loss0 = p.run();
  int checked = 0, kinks = 0;
  for (const auto& b : p.net->param_blocks()) {
    CAPTURE(name, b.name);
    const auto g = std::span<const float>(p.grads).subspan(b.offset, b.size);
    const double norm = std::sqrt(std::inner_product(g.begin(), g.end(), g.begin(), 0.0));
    REQUIRE(norm > 0);
    std::vector<float> dir(g.begin(), g.end());
    for (auto& v : dir) v = static_cast<float>(v / norm);
    const auto d = along(p, b, dir, e);
    CAPTURE(d.measured, d.predicted);
    CHECK(d.rel() < 5e-2);
    // The largest-gradient coordinates of the block (best signal to noise).
    std::vector<std::size_t> idx(b.size);
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    const std::size_t k = std::min<std::size_t>(coords_per_block, b.size);
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                      [&](std::size_t a, std::size_t bb) { return std::abs(g[a]) > std::abs(g[bb]); });
    for (std::size_t j = 0; j < k; ++j) {
      const auto cc = coordinate(p, b.offset + idx[j], e, loss0);
      ++checked;
      if (cc.kink) {
        ++kinks;
        continue;
      }
      CAPTURE(idx[j], cc.analytic, cc.central);
      CHECK(std::abs(cc.analytic - cc.central) < 1e-1 * std::abs(cc.central) + 2e-4);
    }
  }
  CAPTURE(checked, kinks);
  CHECK(kinks * 4 <= checked);  // a kink must be the exception, else the check proves nothing
}

}  // namespace

TEST_CASE("model::Network (ref): gradients match finite differences", "[kernels][model][gradcheck]") {
  SECTION("logreg, every coordinate") { gradcheck("logreg", 1, 4, 4, 3, 1000, 2e-3f); }
  SECTION("mlp") { gradcheck("mlp", 1, 2, 2, 2, 6, 2e-3f); }
  SECTION("mlp_dropout (fixed mask)") { gradcheck("mlp_dropout", 1, 2, 2, 2, 6, 2e-3f); }
  SECTION("lenet") { gradcheck("lenet", 1, 16, 16, 2, 6, 2e-3f); }
  SECTION("cifar10_quick") { gradcheck("cifar10_quick", 3, 12, 12, 2, 6, 2e-3f); }
}

TEST_CASE("model::Network: oneDNN and ref give the same loss and gradients", "[kernels][model][onednn]") {
#ifndef DTS_WITH_ONEDNN
  WARN("built without oneDNN");
  return;
#endif
  /* In details:
   *   o every model at its real input size, batch 4 (2 for cifar10_quick), same params, batch and dropout seed
   * Expectations
   *   o losses equal to float accuracy; gradients nmse < 1e-9 per block (float summation order only)
   */
  struct Case {
    const char* name;
    int c, h, w, N;
  };
  const Case cases[] = {{"logreg", 1, 28, 28, 4},
                        {"mlp", 1, 28, 28, 4},
                        {"mlp_dropout", 1, 28, 28, 4},
                        {"lenet", 1, 28, 28, 4},
                        {"cifar10_quick", 3, 32, 32, 2}};
  for (const auto& cs : cases) {
    CAPTURE(cs.name);
    auto r = test::make_problem(cs.name, Backend::kRef, cs.c, cs.h, cs.w, 10, cs.N, 21);
    auto o = test::make_problem(cs.name, Backend::kOnednn, cs.c, cs.h, cs.w, 10, cs.N, 21);
    REQUIRE(std::ranges::equal(r.params, o.params));
    REQUIRE(std::ranges::equal(r.x, o.x));
    const float lr = r.run(), lo = o.run();
    CHECK(lo == Approx(lr).epsilon(1e-5));
    for (const auto& b : r.net->param_blocks()) {
      CAPTURE(b.name);
      const auto gr = std::span<const float>(r.grads).subspan(b.offset, b.size);
      const auto go = std::span<const float>(o.grads).subspan(b.offset, b.size);
      CHECK(test::nmse(go, gr) < 1e-9);
    }
    // Dropout is on in training: a different dropout seed changes the loss, and both backends follow it.
    if (std::string(cs.name) == "mlp_dropout") {
      r.dropout_seed = o.dropout_seed = 99;
      CHECK(r.run() != lr);
      CHECK(o.run() == Approx(r.run()).epsilon(1e-5));
    }
  }
}
