// The modeled model zoo: published ImageNet-size architectures (AlexNet, GoogLeNet, VGG, ResNet-50) as layer
// shapes only, for modeled numerics (DESIGN.md §3): a 143 M-parameter VGG-19 costs a few kilobytes of layer
// descriptions, never its 575 MB of weights. Each model keeps its published input and output sizes, so its
// parameter count is the published one whatever data set it is paired with (the data pipeline is assumed to
// crop or resize samples to the model's input). Counts and FLOPs against the published figures are in
// zoo_modeled.cpp and checked by tests/kernels/zoo_modeled_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "kernels/model/cost_builder.hpp"

namespace dts::model {

// Zoo models, known to modeled numerics only (no kernels run them): alexnet, alexnet_cifar, googlenet,
// googlenet_noaux, vgg16, vgg19, resnet50.
std::vector<std::string> zoo_model_names();
bool is_zoo_model(const std::string& name);
// One line per zoo model: what it is and its source.
std::string zoo_model_description(const std::string& name);
// A zoo model at its published input and outputs. Throws dts::InputError on an unknown name.
ModelProfile zoo_model(const std::string& name);

// The profile modeled numerics uses for model `name` on samples (c, h, w) of `classes` classes: a zoo model
// (c must be its input channels and classes at most its outputs), or else a kernels Network
// (make_network with the reference backend, which builds layer shapes and allocates no parameters).
// Throws dts::InputError on an unknown name or a shape the model cannot take.
ModelProfile model_profile(const std::string& name, int c, int h, int w, int classes);

}  // namespace dts::model
