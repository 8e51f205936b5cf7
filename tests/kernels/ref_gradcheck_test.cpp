// Gradient checks: every reference kernel's backward against central finite differences, in double.
// The objective is L = sum(out * probe) with a random probe, so dL/dout = probe: each backward is checked
// under a non-trivial upstream gradient. Kinks are avoided by construction (ReLU inputs at least 0.1 from 0,
// max-pool inputs pairwise distinct with gaps far above the step), so differences never straddle one.
// Gradient buffers are pre-filled with garbage to check that backward overwrites rather than accumulates.
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/ref/kernels.hpp"
#include "tests/support/numeric.hpp"

namespace ref = dts::kernels::ref;
using dts::kernels::ConvShape;
using dts::kernels::PoolShape;
using namespace dts::test;
using Vec = std::vector<double>;

namespace {

// Every objective here except softmax is linear in each single parameter, so the step only trades rounding
// error (~1e-16 |L| / eps) against nothing; 1e-5 keeps rounding near 1e-11.
constexpr double kEps = 1e-5;
constexpr double kTol = 1e-6;
constexpr double kGarbage = 1e30;

double dot(const Vec& a, const Vec& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.0); }
Vec garbage(std::size_t n) { return Vec(n, kGarbage); }
std::size_t sz(int a, int b = 1, int c = 1, int d = 1) { return static_cast<std::size_t>(a) * b * c * d; }

}  // namespace

TEST_CASE("ref::linear: backward matches central differences", "[kernels][gradcheck]") {
  const auto [N, C, OC] = GENERATE(table<int, int, int>({{1, 1, 1}, {2, 3, 4}, {5, 7, 3}, {10, 19, 9}}));
  CAPTURE(N, C, OC);
  Vec inp = random_uniform<double>(sz(N, C), 1), weight = random_uniform<double>(sz(OC, C), 2);
  Vec bias = random_uniform<double>(sz(OC), 3), probe = random_uniform<double>(sz(N, OC), 4), out(sz(N, OC));
  auto objective = [&, N = N, C = C, OC = OC] {
    ref::linear_forward<double>(out, inp, weight, bias, N, C, OC);
    return dot(out, probe);
  };
  Vec dinp = garbage(inp.size()), dweight = garbage(weight.size()), dbias = garbage(bias.size());
  ref::linear_backward<double>(dinp, dweight, dbias, probe, inp, weight, N, C, OC);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
  CHECK(max_rel_error(dweight, central_difference(weight, objective, kEps)) < kTol);
  CHECK(max_rel_error(dbias, central_difference(bias, objective, kEps)) < kTol);

  // An empty dinp skips the data gradient and changes nothing else.
  Vec dweight2 = garbage(weight.size()), dbias2 = garbage(bias.size());
  ref::linear_backward<double>({}, dweight2, dbias2, probe, inp, weight, N, C, OC);
  CHECK(dweight2 == dweight);
  CHECK(dbias2 == dbias);
}

TEST_CASE("ref::conv2d: backward matches central differences", "[kernels][gradcheck]") {
  const ConvShape s = GENERATE(values<ConvShape>({
      {.N = 1, .C = 1, .H = 5, .W = 5, .OC = 1, .KH = 3, .KW = 3},
      {.N = 2, .C = 3, .H = 7, .W = 6, .OC = 4, .KH = 3, .KW = 3, .stride = 2, .pad = 1},
      {.N = 2, .C = 2, .H = 6, .W = 9, .OC = 3, .KH = 2, .KW = 4, .stride = 1, .pad = 1},
      {.N = 1, .C = 2, .H = 8, .W = 7, .OC = 3, .KH = 5, .KW = 5, .stride = 1, .pad = 2},
      {.N = 3, .C = 1, .H = 9, .W = 8, .OC = 2, .KH = 3, .KW = 2, .stride = 3, .pad = 0},
  }));
  CAPTURE(s.N, s.C, s.H, s.W, s.OC, s.KH, s.KW, s.stride, s.pad);
  Vec inp = random_uniform<double>(sz(s.N, s.C, s.H, s.W), 1);
  Vec weight = random_uniform<double>(sz(s.OC, s.C, s.KH, s.KW), 2), bias = random_uniform<double>(sz(s.OC), 3);
  Vec probe = random_uniform<double>(sz(s.N, s.OC, s.OH(), s.OW()), 4), out(probe.size());
  auto objective = [&] {
    ref::conv2d_forward<double>(out, inp, weight, bias, s);
    return dot(out, probe);
  };
  Vec dinp = garbage(inp.size()), dweight = garbage(weight.size()), dbias = garbage(bias.size());
  ref::conv2d_backward<double>(dinp, dweight, dbias, probe, inp, weight, s);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
  CHECK(max_rel_error(dweight, central_difference(weight, objective, kEps)) < kTol);
  CHECK(max_rel_error(dbias, central_difference(bias, objective, kEps)) < kTol);

  Vec dweight2 = garbage(weight.size()), dbias2 = garbage(bias.size());
  ref::conv2d_backward<double>({}, dweight2, dbias2, probe, inp, weight, s);
  CHECK(dweight2 == dweight);
  CHECK(dbias2 == dbias);
}

namespace {

// Pool shapes: floor mode; ceil mode without padding (the last window overhangs the input); ceil mode with
// padding and overhang beyond it; stride 1 with padding; PoolShape's "last window must start inside" rule.
const std::vector<PoolShape> kPoolShapes = {
    {.N = 2, .C = 2, .H = 6, .W = 6, .K = 2, .stride = 2},
    {.N = 2, .C = 3, .H = 7, .W = 5, .K = 3, .stride = 2, .ceil_mode = true},
    {.N = 1, .C = 2, .H = 6, .W = 7, .K = 3, .stride = 2, .pad = 1, .ceil_mode = true},
    {.N = 1, .C = 1, .H = 5, .W = 5, .K = 3, .stride = 1, .pad = 1},
    {.N = 2, .C = 1, .H = 3, .W = 4, .K = 2, .stride = 2, .pad = 1, .ceil_mode = true},
};

}  // namespace

TEST_CASE("ref::maxpool2d: backward matches central differences", "[kernels][gradcheck]") {
  const PoolShape s = GENERATE(from_range(kPoolShapes));
  CAPTURE(s.N, s.C, s.H, s.W, s.K, s.stride, s.pad, s.ceil_mode);
  Vec inp = random_distinct<double>(sz(s.N, s.C, s.H, s.W), 1);
  Vec probe = random_uniform<double>(sz(s.N, s.C, s.OH(), s.OW()), 2), out(probe.size());
  std::vector<std::int32_t> argmax(out.size());
  auto objective = [&] {
    ref::maxpool2d_forward<double>(out, argmax, inp, s);
    return dot(out, probe);
  };
  objective();
  for (std::size_t o = 0; o < out.size(); ++o) REQUIRE(out[o] == inp[argmax[o]]);
  Vec dinp = garbage(inp.size());
  ref::maxpool2d_backward<double>(dinp, probe, argmax, s);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
}

TEST_CASE("ref::avgpool2d: backward matches central differences", "[kernels][gradcheck]") {
  const PoolShape s = GENERATE(from_range(kPoolShapes));
  CAPTURE(s.N, s.C, s.H, s.W, s.K, s.stride, s.pad, s.ceil_mode);
  Vec inp = random_uniform<double>(sz(s.N, s.C, s.H, s.W), 1);
  Vec probe = random_uniform<double>(sz(s.N, s.C, s.OH(), s.OW()), 2), out(probe.size());
  auto objective = [&] {
    ref::avgpool2d_forward<double>(out, inp, s);
    return dot(out, probe);
  };
  Vec dinp = garbage(inp.size());
  ref::avgpool2d_backward<double>(dinp, probe, s);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
}

TEST_CASE("ref::avgpool2d: divisor is the window clipped to the padded input", "[kernels]") {
  /* In details:
   *   o input 1x1x2x2 of ones, K = 2, stride 2, pad 1, ceil mode: OH = OW = 2
   *   o each window covers one real cell, one padded row/column, and (ceil mode) nothing beyond the padding
   * Expectations
   *   o every output = 1 / (2 * 2) = 0.25 (Caffe, PyTorch count_include_pad); 1 would mean padding excluded
   *   o without padding (pad 0, 3x3, ceil): the overhanging window [2, 4) is clipped to [2, 3): outputs 1
   */
  const PoolShape padded{.N = 1, .C = 1, .H = 2, .W = 2, .K = 2, .stride = 2, .pad = 1, .ceil_mode = true};
  REQUIRE(padded.OH() == 2);
  Vec out(4);
  ref::avgpool2d_forward<double>(out, Vec(4, 1.0), padded);
  CHECK(out == Vec(4, 0.25));
  const PoolShape overhang{.N = 1, .C = 1, .H = 3, .W = 3, .K = 2, .stride = 2, .ceil_mode = true};
  REQUIRE(overhang.OH() == 2);
  ref::avgpool2d_forward<double>(out, Vec(9, 1.0), overhang);
  CHECK(out == Vec(4, 1.0));
}

TEST_CASE("ref::relu: backward matches central differences away from 0", "[kernels][gradcheck]") {
  const int n = GENERATE(1, 7, 100);
  Vec inp = random_away_from_zero<double>(sz(n), 1), probe = random_uniform<double>(sz(n), 2), out(sz(n));
  auto objective = [&] {
    ref::relu_forward<double>(out, inp);
    return dot(out, probe);
  };
  Vec dinp = garbage(inp.size());
  ref::relu_backward<double>(dinp, probe, inp);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
}

TEST_CASE("ref::dropout: backward matches central differences", "[kernels][gradcheck]") {
  const float p = GENERATE(0.0f, 0.3f, 0.5f);
  const std::size_t n = 64;
  std::vector<float> mask(n);
  ref::dropout_mask(mask, p, /*seed=*/7, /*stream=*/1);
  Vec inp = random_uniform<double>(n, 1), probe = random_uniform<double>(n, 2), out(n);
  auto objective = [&] {
    ref::dropout_forward<double>(out, inp, mask);
    return dot(out, probe);
  };
  Vec dinp = garbage(n);
  ref::dropout_backward<double>(dinp, probe, mask);
  CHECK(max_rel_error(dinp, central_difference(inp, objective, kEps)) < kTol);
}

TEST_CASE("ref::dropout_mask: deterministic, values 0 or 1/(1-p), drop rate p", "[kernels]") {
  const float p = GENERATE(0.0f, 0.2f, 0.5f);
  const std::size_t n = 100000;
  std::vector<float> a(n), b(n), c(n);
  ref::dropout_mask(a, p, 42, 3);
  ref::dropout_mask(b, p, 42, 3);
  ref::dropout_mask(c, p, 42, 4);
  CHECK(a == b);
  if (p > 0) CHECK(a != c);
  std::size_t dropped = 0;
  for (float m : a) {
    REQUIRE((m == 0.0f || m == 1.0f / (1.0f - p)));
    dropped += m == 0.0f;
  }
  // Binomial(n, p): standard deviation <= 0.0016 n; 0.01 n is over 6 sigma.
  CHECK(std::abs(static_cast<double>(dropped) / n - p) < 0.01);
}

TEST_CASE("ref::softmax_xent: backward is the gradient of the mean loss", "[kernels][gradcheck]") {
  const auto [N, K] = GENERATE(table<int, int>({{1, 2}, {4, 10}, {3, 7}}));
  CAPTURE(N, K);
  Vec logits = random_normal<double>(sz(N, K), 1, /*stddev=*/3.0), probs(sz(N, K));
  const std::vector<std::int32_t> labels = random_labels(sz(N), K, 2);
  auto loss = [&, N = N, K = K] { return ref::softmax_xent_forward<double>(probs, logits, labels, N, K); };
  const double l = loss();
  double expected = 0;  // -mean log p(label), from the probabilities just written
  for (int n = 0; n < N; ++n) {
    double row = 0;
    for (int k = 0; k < K; ++k) row += probs[sz(n, K) + k];
    CHECK(row == Approx(1.0).epsilon(1e-12));
    expected -= std::log(probs[sz(n, K) + labels[n]]) / N;
  }
  CHECK(l == Approx(expected).epsilon(1e-12));
  Vec dlogits = garbage(logits.size());
  ref::softmax_xent_backward<double>(dlogits, probs, labels, N, K);
  CHECK(max_rel_error(dlogits, central_difference(logits, loss, kEps)) < kTol);
}
