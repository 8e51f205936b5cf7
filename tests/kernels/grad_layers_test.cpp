// model::grad_layers: the weight and bias blocks of each trainable layer merged into one contiguous range.
#include <catch2/catch.hpp>

#include "kernels/model/grad_layers.hpp"
#include "kernels/model/zoo_modeled.hpp"

TEST_CASE("model::grad_layers: one range per trainable layer, covering the parameters in order", "[kernels]") {
  const auto [name, layers] = GENERATE(table<const char*, std::size_t>({{"lenet", 4}, {"resnet50", 107}}));
  const auto profile = name == std::string("lenet") ? dts::model::model_profile("lenet", 1, 28, 28, 10)
                                                    : dts::model::zoo_model("resnet50");
  const auto g = dts::model::grad_layers(profile.param_blocks);
  REQUIRE(g.size() == layers);  // LeNet: 2 convolutions, 2 fc; ResNet-50: 53 convolutions, 53 batch norms, fc
  std::size_t next = 0;
  for (const auto& l : g) {
    REQUIRE(l.offset == next);
    REQUIRE(l.count > 0);
    next += l.count;
  }
  REQUIRE(next == profile.num_params);
  REQUIRE(g.front().name == profile.layers.front().name);
}

TEST_CASE("model::grad_layers: blocks named otherwise are layers of their own", "[kernels]") {
  const auto g = dts::model::grad_layers({{"0", 0, 3}, {"1", 3, 4}, {"fc.weight", 7, 6}, {"fc.bias", 13, 2}});
  REQUIRE(g.size() == 3);
  REQUIRE(g[2].name == "fc");
  REQUIRE(g[2].offset == 7);
  REQUIRE(g[2].count == 8);
}
