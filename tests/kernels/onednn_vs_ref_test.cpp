// oneDNN layers against the float reference kernels on random data, forward and backward, on small odd
// shapes and on the model zoo's layers: LeNet (N=64), cifar10-quick (N=100), MLP (N=128). Each layer runs
// twice on fresh buffers, to check that primitives built once rebind their arguments on every call.
// Metric: ggml's NMSE per tensor. Both sides round in float but sum in different orders (oneDNN blocks and
// vectorises its reductions); a sum of n random terms then differs by ~sqrt(n) * 6e-8 relative, so NMSE
// grows with the reduction length: see kTol* below.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "kernels/onednn/layers.hpp"
#include "kernels/ref/kernels.hpp"
#include "tests/support/numeric.hpp"

namespace onednn = dts::kernels::onednn;
namespace ref = dts::kernels::ref;
using dts::kernels::ConvShape;
using dts::kernels::PoolShape;
using namespace dts::test;
using Vec = std::vector<float>;

namespace {

constexpr double kTol = 1e-10;       // default: reductions up to a few thousand terms (measured <= 5e-13)
constexpr double kTolExact = 1e-14;  // no reduction (elementwise, max pooling): identical up to rounding
// Convolution weight gradients reduce over N*OH*OW terms, up to 102400 (cifar10-quick conv1): NMSE up to
// ~n * (6e-8)^2 = 4e-10 in the worst case; measured 3e-11 (conv1), 1e-11 (LeNet conv1).
constexpr double kTolConvWeights = 1e-9;
constexpr int kRounds = 2;

std::size_t sz(int a, int b = 1, int c = 1, int d = 1) { return static_cast<std::size_t>(a) * b * c * d; }
Vec garbage(std::size_t n) { return Vec(n, 1e30f); }

}  // namespace

TEST_CASE("onednn::Linear matches ref::linear", "[kernels][onednn]") {
  const auto [N, C, OC] = GENERATE(table<int, int, int>({
      {3, 5, 7},         // odd
      {1, 1, 1},         // degenerate
      {64, 800, 500},    // LeNet ip1
      {64, 500, 10},     // LeNet ip2
      {100, 1024, 64},   // cifar10-quick ip1
      {100, 64, 10},     // cifar10-quick ip2
      {128, 784, 1024},  // MLP
      {128, 1024, 1024},
  }));
  CAPTURE(N, C, OC);
  onednn::Linear layer(N, C, OC);
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t seed = 10 * round;
    const Vec inp = random_uniform<float>(sz(N, C), seed + 1), weight = random_uniform<float>(sz(OC, C), seed + 2);
    const Vec bias = random_uniform<float>(sz(OC), seed + 3), dout = random_uniform<float>(sz(N, OC), seed + 4);
    Vec out = garbage(sz(N, OC)), out_ref(sz(N, OC));
    layer.forward(out, inp, weight, bias);
    ref::linear_forward<float>(out_ref, inp, weight, bias, N, C, OC);
    CHECK(nmse(out, out_ref) < kTol);

    Vec dinp = garbage(inp.size()), dweight = garbage(weight.size()), dbias = garbage(bias.size());
    Vec dinp_ref(inp.size()), dweight_ref(weight.size()), dbias_ref(bias.size());
    layer.backward(dinp, dweight, dbias, dout, inp, weight);
    ref::linear_backward<float>(dinp_ref, dweight_ref, dbias_ref, dout, inp, weight, N, C, OC);
    CHECK(nmse(dinp, dinp_ref) < kTol);
    CHECK(nmse(dweight, dweight_ref) < kTol);
    CHECK(nmse(dbias, dbias_ref) < kTol);

    Vec dweight2 = garbage(weight.size()), dbias2 = garbage(bias.size());
    layer.backward({}, dweight2, dbias2, dout, inp, weight);  // no data gradient
    CHECK(nmse(dweight2, dweight_ref) < kTol);
    CHECK(nmse(dbias2, dbias_ref) < kTol);
  }
}

TEST_CASE("onednn::Conv2d matches ref::conv2d", "[kernels][onednn]") {
  const ConvShape s = GENERATE(values<ConvShape>({
      {.N = 2, .C = 3, .H = 9, .W = 7, .OC = 4, .KH = 3, .KW = 3, .stride = 2, .pad = 1},
      {.N = 3, .C = 2, .H = 6, .W = 9, .OC = 5, .KH = 2, .KW = 4, .stride = 1, .pad = 1},
      {.N = 64, .C = 1, .H = 28, .W = 28, .OC = 20, .KH = 5, .KW = 5},              // LeNet conv1
      {.N = 64, .C = 20, .H = 12, .W = 12, .OC = 50, .KH = 5, .KW = 5},             // LeNet conv2
      {.N = 100, .C = 3, .H = 32, .W = 32, .OC = 32, .KH = 5, .KW = 5, .pad = 2},   // cifar10-quick conv1
      {.N = 100, .C = 32, .H = 16, .W = 16, .OC = 32, .KH = 5, .KW = 5, .pad = 2},  // conv2
      {.N = 100, .C = 32, .H = 8, .W = 8, .OC = 64, .KH = 5, .KW = 5, .pad = 2},    // conv3
  }));
  CAPTURE(s.N, s.C, s.H, s.W, s.OC, s.KH, s.KW, s.stride, s.pad);
  onednn::Conv2d layer(s);
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t seed = 10 * round;
    const Vec inp = random_uniform<float>(sz(s.N, s.C, s.H, s.W), seed + 1);
    const Vec weight = random_uniform<float>(sz(s.OC, s.C, s.KH, s.KW), seed + 2);
    const Vec bias = random_uniform<float>(sz(s.OC), seed + 3);
    const Vec dout = random_uniform<float>(sz(s.N, s.OC, s.OH(), s.OW()), seed + 4);
    Vec out = garbage(dout.size()), out_ref(dout.size());
    layer.forward(out, inp, weight, bias);
    ref::conv2d_forward<float>(out_ref, inp, weight, bias, s);
    CHECK(nmse(out, out_ref) < kTol);

    Vec dinp = garbage(inp.size()), dweight = garbage(weight.size()), dbias = garbage(bias.size());
    Vec dinp_ref(inp.size()), dweight_ref(weight.size()), dbias_ref(bias.size());
    layer.backward(dinp, dweight, dbias, dout, inp, weight);
    ref::conv2d_backward<float>(dinp_ref, dweight_ref, dbias_ref, dout, inp, weight, s);
    CHECK(nmse(dinp, dinp_ref) < kTol);
    CHECK(nmse(dweight, dweight_ref) < kTolConvWeights);
    CHECK(nmse(dbias, dbias_ref) < kTol);

    Vec dweight2 = garbage(weight.size()), dbias2 = garbage(bias.size());
    layer.backward({}, dweight2, dbias2, dout, inp, weight);
    CHECK(nmse(dweight2, dweight_ref) < kTolConvWeights);
    CHECK(nmse(dbias2, dbias_ref) < kTol);
  }
}

TEST_CASE("onednn::Pool2d matches ref max/avg pooling, ceil mode included", "[kernels][onednn]") {
  // The small shapes exercise each way of matching Caffe's average divisor (kernels/onednn/pool.cpp):
  // pad 0 (avg_exclude_padding), padding without overhang (avg_include_padding), padding with ceil-mode
  // overhang (include_padding rescaled per position).
  const PoolShape s = GENERATE(values<PoolShape>({
      {.N = 2, .C = 3, .H = 7, .W = 5, .K = 3, .stride = 2, .ceil_mode = true},
      {.N = 2, .C = 2, .H = 5, .W = 5, .K = 3, .stride = 1, .pad = 1},
      {.N = 2, .C = 2, .H = 6, .W = 7, .K = 3, .stride = 2, .pad = 1, .ceil_mode = true},
      {.N = 2, .C = 1, .H = 3, .W = 4, .K = 2, .stride = 2, .pad = 1, .ceil_mode = true},
      {.N = 64, .C = 20, .H = 24, .W = 24, .K = 2, .stride = 2},                      // LeNet pool1
      {.N = 64, .C = 50, .H = 8, .W = 8, .K = 2, .stride = 2},                        // LeNet pool2
      {.N = 100, .C = 32, .H = 32, .W = 32, .K = 3, .stride = 2, .ceil_mode = true},  // cifar10-quick pool1
      {.N = 100, .C = 32, .H = 16, .W = 16, .K = 3, .stride = 2, .ceil_mode = true},  // pool2
      {.N = 100, .C = 64, .H = 8, .W = 8, .K = 3, .stride = 2, .ceil_mode = true},    // pool3
  }));
  const auto kind = GENERATE(onednn::Pool2d::Kind::kMax, onednn::Pool2d::Kind::kAvg);
  const bool is_max = kind == onednn::Pool2d::Kind::kMax;
  CAPTURE(is_max, s.N, s.C, s.H, s.W, s.K, s.stride, s.pad, s.ceil_mode);
  onednn::Pool2d layer(kind, s);
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t seed = 10 * round;
    // Distinct values: no ties in max pooling, whose tie rule would otherwise be an implementation detail.
    const Vec inp = random_distinct<float>(sz(s.N, s.C, s.H, s.W), seed + 1);
    const Vec dout = random_uniform<float>(sz(s.N, s.C, s.OH(), s.OW()), seed + 2);
    Vec out = garbage(dout.size()), out_ref(dout.size()), dinp = garbage(inp.size()), dinp_ref(inp.size());
    std::vector<std::int32_t> argmax(dout.size());
    layer.forward(out, inp);
    layer.backward(dinp, dout);
    if (is_max) {
      ref::maxpool2d_forward<float>(out_ref, argmax, inp, s);
      ref::maxpool2d_backward<float>(dinp_ref, dout, argmax, s);
    } else {
      ref::avgpool2d_forward<float>(out_ref, inp, s);
      ref::avgpool2d_backward<float>(dinp_ref, dout, s);
    }
    CHECK(nmse(out, out_ref) < (is_max ? kTolExact : kTol));
    CHECK(nmse(dinp, dinp_ref) < (is_max ? kTolExact : kTol));
  }
}

TEST_CASE("onednn::Relu and onednn::Dropout match ref", "[kernels][onednn]") {
  const std::size_t n = GENERATE(std::size_t{1}, std::size_t{1000}, sz(64, 500), sz(128, 1024), sz(100, 32, 32, 32));
  CAPTURE(n);
  onednn::Relu relu(n);
  onednn::Dropout dropout(n);
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t seed = 10 * round;
    const Vec inp = random_uniform<float>(n, seed + 1), dout = random_uniform<float>(n, seed + 2);
    Vec out = garbage(n), out_ref(n), dinp = garbage(n), dinp_ref(n);
    relu.forward(out, inp);
    relu.backward(dinp, dout, inp);
    ref::relu_forward<float>(out_ref, inp);
    ref::relu_backward<float>(dinp_ref, dout, inp);
    CHECK(nmse(out, out_ref) < kTolExact);
    CHECK(nmse(dinp, dinp_ref) < kTolExact);

    Vec mask(n);
    ref::dropout_mask(mask, 0.5f, seed, 1);
    dropout.forward(out, inp, mask);
    dropout.backward(dinp, dout, mask);
    ref::dropout_forward<float>(out_ref, inp, mask);
    ref::dropout_backward<float>(dinp_ref, dout, mask);
    CHECK(nmse(out, out_ref) < kTolExact);
    CHECK(nmse(dinp, dinp_ref) < kTolExact);
  }
}

TEST_CASE("onednn::SoftmaxXent matches ref::softmax_xent", "[kernels][onednn]") {
  const auto [N, K] = GENERATE(table<int, int>({{1, 2}, {3, 5}, {64, 10}, {100, 10}, {128, 10}}));
  CAPTURE(N, K);
  onednn::SoftmaxXent layer(N, K);
  for (std::uint64_t round = 0; round < kRounds; ++round) {
    const std::uint64_t seed = 10 * round;
    // Scale 5: confident rows, with probabilities near 1 and near 1e-8 and small losses.
    const Vec logits = random_normal<float>(sz(N, K), seed + 1, /*stddev=*/5.0);
    const std::vector<std::int32_t> labels = random_labels(sz(N), K, seed + 2);
    Vec probs = garbage(sz(N, K)), probs_ref(sz(N, K)), dlogits = garbage(sz(N, K)), dlogits_ref(sz(N, K));
    const float loss = layer.forward(probs, logits, labels);
    const float loss_ref = ref::softmax_xent_forward<float>(probs_ref, logits, labels, N, K);
    layer.backward(dlogits, probs, labels);
    ref::softmax_xent_backward<float>(dlogits_ref, probs_ref, labels, N, K);
    // Both losses are log-sum-exp of the logits in double, rounded to float.
    CHECK(loss == Approx(loss_ref).epsilon(1e-6));
    CHECK(nmse(probs, probs_ref) < kTol);
    // dlogits = (p - onehot) / N cancels where p ~ 1, so compare absolutely: oneDNN's exp is a few float
    // ulps off (p = 0.998576045 against 0.998576105), i.e. ~1e-7 / N; NMSE would blow that up for a
    // confident row whose dlogits are all ~1e-3.
    CHECK(max_rel_error(dlogits, dlogits_ref, /*floor=*/1.0) * N < 1e-6);
  }
}
