// kernels/model Network: the model zoo's parameter counts and block layout, PyTorch-default init (bounds and
// determinism), the cost model against hand counts, evaluate() over uneven batches, buffer reuse across batch
// sizes, and a short logistic-regression training run on a synthetic set.
// Gradient checks and ref-vs-oneDNN agreement are in network_gradcheck_test.cpp.
#include "kernels/model/network.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "core/errors.hpp"
#include "kernels/data/dataset.hpp"
#include "kernels/model/optimizer.hpp"
#include "model_problem.hpp"

using namespace dts::model;

TEST_CASE("model::make_network: parameter counts and block layout", "[kernels][model]") {
  struct Want {
    const char* name;
    int c, h, w;
    std::size_t params;
  };
  // mlp: papers/elastic_gossip.md; lenet: Caffe MNIST LeNet; cifar10_quick: Caffe's 145,578; logreg 784*10+10.
  const Want want[] = {{"mlp", 1, 28, 28, 2913290},
                       {"mlp_dropout", 1, 28, 28, 2913290},
                       {"lenet", 1, 28, 28, 431080},
                       {"cifar10_quick", 3, 32, 32, 145578},
                       {"logreg", 1, 28, 28, 7850}};
  for (const auto& wt : want) {
    CAPTURE(wt.name);
    const auto net = make_network(wt.name, Backend::kRef, wt.c, wt.h, wt.w, 10);
    CHECK(net->name() == wt.name);
    CHECK(net->num_params() == wt.params);
    // Blocks tile the buffer in order, weight then bias.
    std::size_t next = 0;
    const auto blocks = net->param_blocks();
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      CHECK(blocks[i].offset == next);
      CHECK(blocks[i].name.ends_with(i % 2 == 0 ? ".weight" : ".bias"));
      next += blocks[i].size;
    }
    CHECK(next == wt.params);
  }
  const auto lenet = make_network("lenet", Backend::kRef, 1, 28, 28, 10)->param_blocks();
  REQUIRE(lenet.size() == 8);
  CHECK(lenet[0].name == "conv1.weight");
  CHECK(lenet[0].size == 20 * 25);
  CHECK(lenet[5].name == "fc1.bias");
  CHECK(lenet[5].size == 500);
  CHECK(std::ranges::count(network_names(), std::string("cifar10_quick")) == 1);
}

TEST_CASE("model::make_network: bad names and shapes are input errors", "[kernels][model]") {
  CHECK_THROWS_AS(make_network("resnet", Backend::kRef, 1, 28, 28, 10), dts::InputError);
  CHECK_THROWS_AS(make_network("mlp", Backend::kRef, 0, 28, 28, 10), dts::InputError);
  CHECK_THROWS_AS(make_network("logreg", Backend::kRef, 1, 28, 28, 0), dts::InputError);
  CHECK_THROWS_AS(make_network("lenet", Backend::kRef, 1, 8, 8, 10), dts::InputError);  // conv2 sees 2x2 < 5x5
  CHECK_NOTHROW(make_network("lenet", Backend::kRef, 1, 16, 16, 10));                   // smallest LeNet input
}

TEST_CASE("model::init_params: deterministic, within +-1/sqrt(fan_in), filling the range", "[kernels][model]") {
  const auto net = make_network("lenet", Backend::kRef, 1, 28, 28, 10);
  std::vector<float> a(net->num_params()), b(a.size()), c(a.size());
  net->init_params(a, 42);
  net->init_params(b, 42);
  net->init_params(c, 43);
  CHECK(std::ranges::equal(a, b));
  CHECK(!std::ranges::equal(a, c));
  // The same seed gives the same parameters on a second network object (every rank builds its own).
  std::vector<float> d(a.size());
  make_network("lenet", Backend::kRef, 1, 28, 28, 10)->init_params(d, 42);
  CHECK(std::ranges::equal(a, d));
  const double fan_in[] = {25, 25, 500, 500, 800, 800, 500, 500};  // per block: conv1, conv2, fc1, fc2
  const auto blocks = net->param_blocks();
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    CAPTURE(blocks[i].name);
    const auto v = std::span<const float>(a).subspan(blocks[i].offset, blocks[i].size);
    const double bound = 1 / std::sqrt(fan_in[i]);
    const auto [lo, hi] = std::ranges::minmax(v);
    CHECK(lo >= -bound);
    CHECK(hi <= bound);
    if (v.size() >= 500) {  // U(-b, b): extremes near +-b, mean near 0, variance b^2/3
      CHECK(hi > 0.98 * bound);
      CHECK(lo < -0.98 * bound);
      const double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
      double var = 0;
      for (float x : v) var += (x - mean) * (x - mean);
      var /= double(v.size());
      CHECK(std::abs(mean) < 0.1 * bound);
      CHECK(var == Approx(bound * bound / 3).epsilon(0.1));
    }
  }
}

TEST_CASE("model::Network::cost: hand counts for the MLP and LeNet", "[kernels][model]") {
  /* In details:
   *   o mlp 784-1024-1024-1024-10: MACs per sample = 784*1024 + 2*1024^2 + 1024*10 (anchors_common.py)
   *   o forward flops = 2*MAC + biases; backward = 2x forward minus fc1's data gradient
   * Expectations
   *   o sums match; param bytes sum to 4 * num_params
   */
  const auto mlp = make_network("mlp", Backend::kRef, 1, 28, 28, 10);
  const double mac = 784.0 * 1024 + 2.0 * 1024 * 1024 + 1024.0 * 10, bias = 3 * 1024 + 10;
  double fwd = 0, bwd = 0, pbytes = 0, relu_fwd = 0;
  for (const auto& c : mlp->cost()) {
    if (c.name.starts_with("fc")) fwd += c.fwd_flops_per_sample, bwd += c.bwd_flops_per_sample;
    if (c.name.starts_with("relu")) relu_fwd += c.fwd_flops_per_sample;
    pbytes += c.param_bytes;
  }
  CHECK(fwd == 2 * mac + bias);
  CHECK(bwd == 4 * mac + bias - 2 * 784.0 * 1024);
  CHECK(relu_fwd == 3 * 1024);
  CHECK(pbytes == 4.0 * 2913290);
  const auto costs = mlp->cost();
  CHECK(costs.back().name == "loss");
  CHECK(costs[1].name == "fc1");
  CHECK(costs[1].fwd_bytes_per_sample == 4.0 * (784 + 1024));
  CHECK(costs[1].bwd_bytes_per_sample == 4.0 * (1024 + 784));  // no dinp written

  const auto lenet = make_network("lenet", Backend::kRef, 1, 28, 28, 10);
  const double lenet_mac = 24.0 * 24 * 20 * 25 + 8.0 * 8 * 50 * 20 * 25 + 800.0 * 500 + 500.0 * 10;
  double lfwd = 0;
  for (const auto& c : lenet->cost())
    if (c.name.starts_with("fc") || c.name.starts_with("conv")) lfwd += c.fwd_flops_per_sample;
  CHECK(lfwd == 2 * lenet_mac + (24 * 24 * 20 + 8 * 8 * 50 + 500 + 10));
  CHECK(lenet->cost()[0].bwd_flops_per_sample == 2 * 24.0 * 24 * 20 * 25 + 24 * 24 * 20);  // conv1: no dinp
}

TEST_CASE("model::Network: buffers reused across batch sizes give the same results", "[kernels][model]") {
  for (auto backend : test::backends()) {
    auto p = test::make_problem("lenet", backend, 1, 16, 16, 10, 4, 5);
    const float l1 = p.run();
    const auto g1 = p.grads;
    dts::data::Dataset ds{"t", 3, 1, 16, 16, 10, {p.x.begin(), p.x.begin() + 3 * 256}, {p.y.begin(), p.y.begin() + 3}};
    const auto r1 = p.net->evaluate(p.params, ds, 2);  // batches of 2 and 1
    const float l2 = p.run();
    CHECK(l1 == l2);
    CHECK(std::ranges::equal(g1, p.grads));
    const auto r2 = p.net->evaluate(p.params, ds, 1000);
    CHECK(r1.total == 3);
    CHECK(r1.correct == r2.correct);
    CHECK(r1.mean_loss == Approx(r2.mean_loss).epsilon(1e-5));
  }
}

TEST_CASE("model::Network::evaluate: shape mismatch is an input error", "[kernels][model]") {
  const auto net = make_network("logreg", Backend::kRef, 1, 4, 4, 3);
  std::vector<float> params(net->num_params());
  const auto ds = dts::data::synthetic(1, 10, 1, 5, 5, 3);
  CHECK_THROWS_AS(net->evaluate(params, ds), dts::InputError);
}

TEST_CASE("model: logistic regression learns a synthetic set", "[kernels][model]") {
  /* In details:
   *   o synthetic(seed 3): 4 Gaussian classes in 16 dimensions, linearly separable with high probability
   *   o logreg, SGD momentum 0.9, lr 0.05, batch 32, 200 steps, both backends
   * Expectations
   *   o accuracy on the training set > 0.95 and mean loss well below log(4) = 1.39
   */
  const auto ds = dts::data::synthetic(3, 1024, 1, 4, 4, 4);
  for (auto backend : test::backends()) {
    const auto net = make_network("logreg", backend, 1, 4, 4, 4);
    std::vector<float> params(net->num_params()), grads(params.size());
    net->init_params(params, 1);
    Optimizer opt({.kind = "momentum", .lr = 0.05}, params.size());
    dts::data::BatchStream stream(ds, dts::data::shard_indices(ds.n, 0, 1, 3), 32, 3);
    std::vector<float> x(32 * ds.sample_size());
    std::vector<std::int32_t> y(32);
    const auto before = net->evaluate(params, ds);
    for (int step = 0; step < 200; ++step) {
      stream.next(x, y);
      net->forward_backward(params, grads, x, y, 32, static_cast<std::uint64_t>(step));
      opt.step(params, grads);
    }
    const auto after = net->evaluate(params, ds, 100);
    CAPTURE(before.accuracy(), after.accuracy(), after.mean_loss);
    CHECK(after.total == 1024);
    CHECK(after.accuracy() > 0.95);
    CHECK(after.mean_loss < 0.5 * before.mean_loss);
  }
}
