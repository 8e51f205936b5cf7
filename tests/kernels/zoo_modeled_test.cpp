// The modeled zoo (kernels/model/zoo_modeled.hpp) and its CostBuilder: parameter counts equal to the published
// totals, forward multiply-adds close to the published figures, parameter blocks that tile the buffer, and
// the builder's costs equal to a kernels Network's for the same architecture (so both describe one device
// model).
#include "kernels/model/zoo_modeled.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "core/errors.hpp"

using namespace dts::model;

namespace {

void check_layout(const ModelProfile& p) {
  std::size_t next = 0;
  std::set<std::string> names;
  for (const auto& b : p.param_blocks) {
    CHECK(b.offset == next);
    CHECK(b.size > 0);
    CHECK(names.insert(b.name).second);  // unique names, for per-layer messages
    next += b.size;
  }
  CHECK(next == p.num_params);
  double param_bytes = 0;
  for (const auto& l : p.layers) param_bytes += l.param_bytes;
  CHECK(param_bytes == Approx(4.0 * static_cast<double>(p.num_params)));
}

void check_same_costs(const std::vector<LayerCost>& a, const std::vector<LayerCost>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i, a[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].fwd_flops_per_sample == b[i].fwd_flops_per_sample);
    CHECK(a[i].bwd_flops_per_sample == b[i].bwd_flops_per_sample);
    CHECK(a[i].fwd_bytes_per_sample == b[i].fwd_bytes_per_sample);
    CHECK(a[i].bwd_bytes_per_sample == b[i].bwd_bytes_per_sample);
    CHECK(a[i].param_bytes == b[i].param_bytes);
  }
}

}  // namespace

TEST_CASE("model::zoo_model: parameter counts are the published totals", "[kernels][zoo]") {
  struct Want {
    const char* name;
    std::size_t params;
    int outputs = 1000;
  };
  // alexnet: BVLC Caffe bvlc_alexnet; alexnet_cifar: the one-tower AlexNet (no groups), 249.5 MB as
  // papers/easgd_hpc.md's 249 MB; vgg16/vgg19/resnet50: torchvision. googlenet: BVLC Caffe with the two auxiliary
  // heads (13,378,280 x 4 B = 53.5 MB, the "~53 MB" BVLC model); googlenet_noaux: the 6,998,552 of the Caffe
  // deploy graph (torchvision's 6,624,904 differs: batch norm instead of biases and 3x3 in place of the 5x5).
  const Want want[] = {{"alexnet", 60'965'224},
                       {"alexnet_cifar", 62'378'344},
                       {"googlenet", 13'378'280},
                       {"googlenet_noaux", 6'998'552},
                       {"vgg16", 138'357'544},
                       {"vgg19", 143'667'240},
                       {"resnet50", 25'557'032},
                       // The MPCA paper's (papers/mpca_sgd.md §8.1): torchvision vgg11 (config A), resnet34,
                       // resnet152; He et al.'s CIFAR ResNet-110 with projection shortcuts (option A's zero
                       // padding has 2,752 fewer: 1,727,962).
                       {"vgg_a", 132'863'336},
                       {"resnet34", 21'797'672},
                       {"resnet152", 60'192'808},
                       {"resnet110", 1'730'714, 10}};
  REQUIRE(zoo_model_names().size() == std::size(want));
  for (const auto& w : want) {
    CAPTURE(w.name);
    REQUIRE(is_zoo_model(w.name));
    const ModelProfile p = zoo_model(w.name);
    CHECK(p.name == w.name);
    CHECK(p.num_params == w.params);
    CHECK(p.outputs == w.outputs);
    check_layout(p);
  }
  CHECK(zoo_model("vgg19").num_params * 4 / 1'000'000 == 574);  // the paper's "575 MB" (574.7)
  CHECK_FALSE(is_zoo_model("lenet"));
  CHECK_THROWS_AS(zoo_model("resnet18"), dts::InputError);
}

TEST_CASE("model::zoo_model: forward multiply-adds match the published figures", "[kernels][zoo]") {
  // Published conv+fc GMACs per 224 (227) image: AlexNet (Caffe) 0.724; GoogLeNet 1.586, the sum of the "ops"
  // column of Szegedy et al.'s Table 1 (the text rounds it to "1.5 billion multiply-adds"); VGG-16 15.47 and
  // VGG-19 19.63 (torchvision / ptflops); ResNet-50 4.09.
  CHECK(zoo_model("alexnet").fwd_macs_per_sample == 724'406'816.0);  // by hand: 665,784,864 conv + 58,621,952 fc
  CHECK(zoo_model("googlenet_noaux").fwd_macs_per_sample / 1e9 == Approx(1.586).epsilon(0.005));
  CHECK(zoo_model("vgg16").fwd_macs_per_sample / 1e9 == Approx(15.47).epsilon(0.005));
  CHECK(zoo_model("vgg19").fwd_macs_per_sample / 1e9 == Approx(19.63).epsilon(0.005));
  CHECK(zoo_model("resnet50").fwd_macs_per_sample / 1e9 == Approx(4.09).epsilon(0.005));
  // VGG-11 7.61, ResNet-34 3.67, ResNet-152 11.56 (torchvision / ptflops); CIFAR ResNet-110 0.253 (He et al.).
  CHECK(zoo_model("vgg_a").fwd_macs_per_sample / 1e9 == Approx(7.61).epsilon(0.005));
  CHECK(zoo_model("resnet34").fwd_macs_per_sample / 1e9 == Approx(3.67).epsilon(0.01));
  CHECK(zoo_model("resnet152").fwd_macs_per_sample / 1e9 == Approx(11.56).epsilon(0.01));
  CHECK(zoo_model("resnet110").fwd_macs_per_sample / 1e9 == Approx(0.253).epsilon(0.01));
  // FLOPs: 2 per MAC, and a backward of about twice the forward (data and weight gradients).
  for (const auto& name : zoo_model_names()) {
    CAPTURE(name);
    const ModelProfile p = zoo_model(name);
    double fwd = 0, bwd = 0;
    for (const auto& l : p.layers) {
      fwd += l.fwd_flops_per_sample;
      bwd += l.bwd_flops_per_sample;
    }
    CHECK(fwd >= 2 * p.fwd_macs_per_sample);
    CHECK(fwd < 2.1 * p.fwd_macs_per_sample);
    CHECK(bwd / fwd == Approx(2.0).epsilon(0.15));
  }
}

TEST_CASE("model::CostBuilder: the same costs and blocks as a kernels Network", "[kernels][zoo]") {
  // lenet and cifar10_quick as in network.cpp, described with the builder.
  CostBuilder lenet("lenet", {1, 28, 28});
  lenet.conv(20, 5).maxpool(2, 2).conv(50, 5).maxpool(2, 2).flatten().fc(500).relu().fc(10).loss();
  CostBuilder quick("cifar10_quick", {3, 32, 32});
  quick.conv(32, 5, 1, 2).maxpool(3, 2, 0, true).relu().conv(32, 5, 1, 2).relu().avgpool(3, 2, 0, true);
  quick.conv(64, 5, 1, 2).relu().avgpool(3, 2, 0, true).flatten().fc(64).fc(10).loss();
  CostBuilder mlp("mlp_dropout", {1, 28, 28});
  mlp.flatten().dropout().fc(1024).relu().dropout().fc(1024).relu().dropout().fc(1024).relu().dropout().fc(10).loss();
  for (CostBuilder* b : {&lenet, &quick, &mlp}) {
    const ModelProfile built = b->take(10);
    CAPTURE(built.name);
    const auto net = make_network(built.name, Backend::kRef, built.input.c, built.input.h, built.input.w, 10);
    CHECK(built.num_params == net->num_params());
    check_same_costs(built.layers, net->cost());
    const auto blocks = net->param_blocks();
    REQUIRE(built.param_blocks.size() == blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      CHECK(built.param_blocks[i].name == blocks[i].name);
      CHECK(built.param_blocks[i].offset == blocks[i].offset);
      CHECK(built.param_blocks[i].size == blocks[i].size);
    }
  }
}

TEST_CASE("model::model_profile: zoo models and kernels Networks", "[kernels][zoo]") {
  // A kernels network: its own costs and blocks, no parameters allocated.
  const ModelProfile lenet = model_profile("lenet", 1, 28, 28, 10);
  const auto net = make_network("lenet", Backend::kRef, 1, 28, 28, 10);
  CHECK(lenet.num_params == 431'080);
  check_same_costs(lenet.layers, net->cost());
  CHECK(lenet.param_blocks.size() == net->param_blocks().size());
  // A zoo model keeps its own input size; channels must match and classes fit its outputs.
  const ModelProfile alex = model_profile("alexnet_cifar", 3, 32, 32, 10);
  CHECK(alex.num_params == 62'378'344);
  CHECK(alex.input.h == 227);
  CHECK_THROWS_AS(model_profile("resnet50", 1, 28, 28, 10), dts::InputError);       // 1 channel
  CHECK_THROWS_AS(model_profile("resnet50", 3, 224, 224, 21841), dts::InputError);  // more classes than outputs
  CHECK_THROWS_WITH(model_profile("resnet5", 3, 224, 224, 10), Catch::Contains("resnet50"));
}
