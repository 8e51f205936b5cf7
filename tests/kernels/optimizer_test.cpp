// kernels/model Optimizer against steps computed by hand with torch.optim's formulas: plain SGD, weight decay,
// momentum (buffer starts at the first gradient), Nesterov, Adam (bias-corrected), Caffe's "inv" lr policy.
// Two parameters, two steps each: p0 = (1, -2), g1 = (0.5, 0.25), g2 = (-1, 0.5).
#include "kernels/model/optimizer.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/errors.hpp"

using namespace dts::model;

namespace {

const std::vector<float> kP0 = {1.0f, -2.0f}, kG1 = {0.5f, 0.25f}, kG2 = {-1.0f, 0.5f};

// Runs the optimizer over g1 (and g2 when two_steps) from p0.
std::vector<float> run(const OptimizerConfig& cfg, bool two_steps) {
  Optimizer opt(cfg, 2);
  auto p = kP0;
  opt.step(p, kG1);
  if (two_steps) opt.step(p, kG2);
  CHECK(opt.iteration() == (two_steps ? 2 : 1));
  return p;
}

void check_eq(const std::vector<float>& got, double a, double b) {
  CHECK(got[0] == Approx(a).epsilon(1e-6));
  CHECK(got[1] == Approx(b).epsilon(1e-6));
}

}  // namespace

TEST_CASE("model::Optimizer: sgd, with and without weight decay", "[kernels][optimizer]") {
  check_eq(run({.kind = "sgd", .lr = 0.1}, false), 1 - 0.1 * 0.5, -2 - 0.1 * 0.25);
  // d = g + 0.1 p = (0.6, 0.05)
  check_eq(run({.kind = "sgd", .lr = 0.1, .weight_decay = 0.1}, false), 1 - 0.06, -2 - 0.005);
  // Plain SGD ignores the momentum setting.
  check_eq(run({.kind = "sgd", .lr = 0.1, .momentum = 0.9}, true), 1 - 0.05 + 0.1, -2 - 0.025 - 0.05);
}

TEST_CASE("model::Optimizer: momentum starts its buffer at the first gradient", "[kernels][optimizer]") {
  // Step 1: b = g1, p = p0 - 0.1 g1 = (0.95, -2.025). Step 2: b = 0.9 g1 + g2 = (-0.55, 0.725).
  check_eq(run({.kind = "momentum", .lr = 0.1, .momentum = 0.9}, false), 0.95, -2.025);
  check_eq(run({.kind = "momentum", .lr = 0.1, .momentum = 0.9}, true), 0.95 + 0.055, -2.025 - 0.0725);
  // With weight decay 0.1: d1 = (0.6, 0.05), p1 = (0.94, -2.005); d2 = g2 + 0.1 p1 = (-0.906, 0.2995);
  // b2 = 0.9 d1 + d2 = (-0.366, 0.3445); p2 = p1 - 0.1 b2.
  check_eq(run({.kind = "momentum", .lr = 0.1, .momentum = 0.9, .weight_decay = 0.1}, true), 0.94 + 0.0366,
           -2.005 - 0.03445);
}

TEST_CASE("model::Optimizer: nesterov", "[kernels][optimizer]") {
  // Step 1: b = g1, p -= 0.1 (g1 + 0.9 g1) = (0.905, -2.0475).
  // Step 2: b = (-0.55, 0.725), p -= 0.1 (g2 + 0.9 b) = 0.1 (-1.495, 1.1525).
  check_eq(run({.kind = "nesterov", .lr = 0.1, .momentum = 0.9}, false), 0.905, -2.0475);
  check_eq(run({.kind = "nesterov", .lr = 0.1, .momentum = 0.9}, true), 0.905 + 0.1495, -2.0475 - 0.11525);
}

TEST_CASE("model::Optimizer: adam with bias correction", "[kernels][optimizer]") {
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  // Step 1: m = 0.1 g, v = 0.001 g^2; corrected they are g and g^2, so p moves by lr * g / (|g| + eps).
  check_eq(run({.kind = "adam", .lr = lr}, false), 1 - lr * 0.5 / (0.5 + eps), -2 - lr * 0.25 / (0.25 + eps));
  // Step 2, by the formula: p -= lr / (1 - b1^2) * m / (sqrt(v) / sqrt(1 - b2^2) + eps).
  double p[2] = {1 - lr * 0.5 / (0.5 + eps), -2 - lr * 0.25 / (0.25 + eps)};
  for (int i = 0; i < 2; ++i) {
    const double m = b1 * (1 - b1) * kG1[i] + (1 - b1) * kG2[i];
    const double v = b2 * (1 - b2) * kG1[i] * kG1[i] + (1 - b2) * kG2[i] * kG2[i];
    p[i] -= lr / (1 - b1 * b1) * m / (std::sqrt(v) / std::sqrt(1 - b2 * b2) + eps);
  }
  check_eq(run({.kind = "adam", .lr = lr}, true), p[0], p[1]);
  // L2 weight decay enters the moments (torch.optim.Adam, not AdamW): d1 = g1 + 0.1 p0 = (0.6, 0.05).
  check_eq(run({.kind = "adam", .lr = lr, .weight_decay = 0.1}, false), 1 - lr, -2 - lr);
}

TEST_CASE("model::Optimizer: Caffe inv lr policy, iter counted from 0", "[kernels][optimizer]") {
  OptimizerConfig cfg{.kind = "sgd", .lr = 0.01, .lr_policy = "inv", .lr_gamma = 1e-4, .lr_power = 0.75};
  Optimizer opt(cfg, 2);
  CHECK(opt.lr_now() == Approx(0.01));
  auto p = kP0;
  opt.step(p, kG1);  // lr 0.01
  CHECK(opt.lr_now() == Approx(0.01 * std::pow(1.0001, -0.75)).epsilon(1e-12));
  opt.step(p, kG2);
  check_eq(p, 1 - 0.01 * 0.5 + 0.01 * std::pow(1.0001, -0.75), -2 - 0.01 * 0.25 - 0.01 * std::pow(1.0001, -0.75) * 0.5);
  std::vector<float> g(2, 0.0f);
  while (opt.iteration() < 10000) opt.step(p, g);
  CHECK(opt.lr_now() == Approx(0.01 * std::pow(2.0, -0.75)).epsilon(1e-12));  // (1 + 1e-4 * 1e4) = 2
  CHECK(Optimizer({.lr = 0.3}, 1).lr_now() == 0.3);                           // "fixed"
}

TEST_CASE("model::Optimizer: unknown kind or policy is an input error; device-model costs", "[kernels][optimizer]") {
  CHECK_THROWS_AS(Optimizer({.kind = "rmsprop"}, 2), dts::InputError);
  CHECK_THROWS_AS(Optimizer({.lr_policy = "step"}, 2), dts::InputError);
  CHECK(Optimizer({.kind = "sgd"}, 1).bytes_per_param() == 12);
  CHECK(Optimizer({.kind = "momentum"}, 1).bytes_per_param() == 20);
  CHECK(Optimizer({.kind = "adam"}, 1).bytes_per_param() == 28);
  CHECK(Optimizer({.kind = "sgd"}, 1).flops_per_param() == 2);
  CHECK(Optimizer({.kind = "sgd", .weight_decay = 1e-4}, 1).flops_per_param() == 4);
  CHECK(Optimizer({.kind = "nesterov"}, 1).flops_per_param() > Optimizer({.kind = "momentum"}, 1).flops_per_param());
}

TEST_CASE("model::Optimizer: range steps over a partition equal one full step, bit for bit", "[kernels][optimizer]") {
  // The parameter server's update (issue 17): each range at the same iteration, its state at its offset. Three
  // steps, so that momentum's first step, Adam's bias correction and the inv policy all see iterations 0-2; a
  // vector large enough for the parallel loop (> 65536) and ranges of uneven sizes, in an order of their own.
  const std::string kind = GENERATE("sgd", "momentum", "nesterov", "adam");
  const OptimizerConfig cfg{
      .kind = kind, .lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .lr_policy = "inv", .lr_gamma = 0.1};
  const std::size_t n = 70001;
  std::vector<float> p0(n), g(n);
  for (std::size_t i = 0; i < n; ++i) {
    p0[i] = std::sin(0.001f * static_cast<float>(i));
    g[i] = std::cos(0.003f * static_cast<float>(i)) - 0.25f;
  }
  Optimizer whole(cfg, n), parts(cfg, n);
  auto a = p0, b = p0;
  const std::vector<std::pair<std::size_t, std::size_t>> ranges = {{66000, 4001}, {0, 1}, {1, 65999}};
  for (std::int64_t it = 0; it < 3; ++it) {
    whole.step(a, g);
    for (const auto& [from, count] : ranges) {
      parts.step_range(std::span<float>(b).subspan(from, count), std::span<const float>(g).subspan(from, count), from,
                       it);
    }
  }
  CHECK(parts.iteration() == 0);  // the counter of step() is not advanced
  CHECK(a == b);
  // A range at another iteration differs (the check above could not pass on an ignored iteration).
  auto c = p0;
  Optimizer other(cfg, n);
  other.step_range(std::span<float>(c).subspan(0, 10), std::span<const float>(g).subspan(0, 10), 0, 5);
  auto d = p0;
  Optimizer first(cfg, n);
  first.step_range(std::span<float>(d).subspan(0, 10), std::span<const float>(g).subspan(0, 10), 0, 0);
  CHECK(c != d);
}
