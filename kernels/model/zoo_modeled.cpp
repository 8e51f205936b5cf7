// The modeled zoo's architectures, written with CostBuilder. Parameter counts and forward multiply-adds
// (convolutions and fully connected layers, one sample) against the published figures:
//
//   model            input      params        fwd GMACs  source
//   alexnet          3x227x227  60,965,224    0.724      BVLC Caffe AlexNet (two-group conv2/4/5, LRN)
//   alexnet_cifar    3x227x227  62,378,344    1.135      one-tower AlexNet (no groups), 1000-way fc8: the 249 MB
//                                                        of papers/easgd_hpc.md §9 (62,378,344 x 4 B = 249.5 MB)
//                                                        with Cifar images upscaled to 227 (assumed)
//   googlenet        3x224x224  13,378,280    1.59       BVLC Caffe GoogLeNet training graph, both auxiliary
//                                                        classifiers included (53.5 MB: the paper's ~53 MB)
//   googlenet_noaux  3x224x224   6,998,552    1.58       the same without the auxiliary classifiers (Szegedy et
//                                                        al. Table 1's ops sum to 1.586 G; its text: "1.5 billion")
//   vgg16            3x224x224  138,357,544   15.47      Simonyan & Zisserman config D (torchvision vgg16)
//   vgg19            3x224x224  143,667,240   19.63      config E (torchvision vgg19; 575 MB)
//   resnet50         3x224x224  25,557,032    4.09       torchvision resnet50 (v1.5: stride on the 3x3)
// The MPCA paper's models (papers/mpca_sgd.md §8.1, §10; its message sizes are the paper's MiB figures):
//   vgg_a            3x224x224  132,863,336   7.61       VGG config A (torchvision vgg11; 506.8 MiB, paper 491)
//   resnet34         3x224x224  21,797,672    3.67       torchvision resnet34 (basic blocks; 83.2 MiB, paper 83)
//   resnet152        3x224x224  60,192,808    11.56      torchvision resnet152 (229.6 MiB, paper 223)
//   resnet110        3x32x32    1,730,714     0.253      He et al.'s CIFAR ResNet-110 (3 x 18 basic blocks of
//                                                        16/32/64), 1x1 projection shortcuts at the two stride-2
//                                                        blocks (the paper's option A pads with zeros, 2,752 fewer
//                                                        parameters); 10 outputs; 6.6 MiB, paper 6.7
//
// Caffe-style pools (AlexNet, GoogLeNet) round up (ceil mode); torchvision-style ones (VGG, ResNet) round down.
#include "kernels/model/zoo_modeled.hpp"

#include <algorithm>
#include <functional>

#include "core/errors.hpp"

namespace dts::model {
namespace {

constexpr Shape kImageNet224{3, 224, 224};
constexpr Shape kCaffe227{3, 227, 227};
constexpr int kImageNetClasses = 1000;

// AlexNet (Krizhevsky et al. 2012) as in Caffe: `groups` 2 for the two-tower convolutions, 1 for one tower.
ModelProfile alexnet(const std::string& name, int groups) {
  CostBuilder b(name, kCaffe227);
  b.conv(96, 11, 4).relu().lrn().maxpool(3, 2, 0, true);             // 96 x 55 x 55 -> 27
  b.conv(256, 5, 1, 2, groups).relu().lrn().maxpool(3, 2, 0, true);  // 256 x 27 x 27 -> 13
  b.conv(384, 3, 1, 1).relu();
  b.conv(384, 3, 1, 1, groups).relu();
  b.conv(256, 3, 1, 1, groups).relu().maxpool(3, 2, 0, true);  // 256 x 6 x 6
  b.fc(4096).relu().dropout().fc(4096).relu().dropout().fc(kImageNetClasses).loss();
  return b.take(kImageNetClasses);
}

// One inception module (Szegedy et al. 2015, Table 1): 1x1; 1x1 -> 3x3; 1x1 -> 5x5; 3x3 max pool -> 1x1.
void inception(CostBuilder& b, int c1, int r3, int c3, int r5, int c5, int pool_proj) {
  const Shape in = b.shape();
  std::vector<Shape> out;
  out.push_back(b.at(in).conv(c1, 1).relu().shape());
  out.push_back(b.at(in).conv(r3, 1).relu().conv(c3, 3, 1, 1).relu().shape());
  out.push_back(b.at(in).conv(r5, 1).relu().conv(c5, 5, 1, 2).relu().shape());
  out.push_back(b.at(in).maxpool(3, 1, 1, true).conv(pool_proj, 1).relu().shape());
  b.concat(out);
}

// GoogLeNet's auxiliary classifier on a 14 x 14 inception output: 5x5/3 average pool, 1x1 conv 128, fc 1024,
// dropout 0.7, fc 1000, its own (0.3-weighted) loss. The main path continues from the same activation.
void aux_classifier(CostBuilder& b, const std::string& loss_name) {
  const Shape in = b.shape();
  b.avgpool(5, 3, 0, true).conv(128, 1).relu().fc(1024).relu().dropout().fc(kImageNetClasses).loss(loss_name);
  b.at(in);
}

// GoogLeNet as BVLC Caffe's train_val.prototxt (bias on every conv, LRN, no batch normalization).
ModelProfile googlenet(const std::string& name, bool aux) {
  CostBuilder b(name, kImageNet224);
  b.conv(64, 7, 2, 3).relu().maxpool(3, 2, 0, true).lrn();                      // 64 x 56 x 56
  b.conv(64, 1).relu().conv(192, 3, 1, 1).relu().lrn().maxpool(3, 2, 0, true);  // 192 x 28 x 28
  inception(b, 64, 96, 128, 16, 32, 32);                                        // 3a: 256
  inception(b, 128, 128, 192, 32, 96, 64);                                      // 3b: 480
  b.maxpool(3, 2, 0, true);                                                     // 14 x 14
  inception(b, 192, 96, 208, 16, 48, 64);                                       // 4a: 512
  if (aux) aux_classifier(b, "loss1");
  inception(b, 160, 112, 224, 24, 64, 64);  // 4b: 512
  inception(b, 128, 128, 256, 24, 64, 64);  // 4c: 512
  inception(b, 112, 144, 288, 32, 64, 64);  // 4d: 528
  if (aux) aux_classifier(b, "loss2");
  inception(b, 256, 160, 320, 32, 128, 128);  // 4e: 832
  b.maxpool(3, 2, 0, true);                   // 7 x 7
  inception(b, 256, 160, 320, 32, 128, 128);  // 5a: 832
  inception(b, 384, 192, 384, 48, 128, 128);  // 5b: 1024
  b.avgpool(7, 1).dropout().fc(kImageNetClasses).loss(aux ? "loss3" : "loss");
  return b.take(kImageNetClasses);
}

// VGG (Simonyan & Zisserman 2015): `convs` 3x3 convolutions per stage (config D: 2 2 3 3 3, E: 2 2 4 4 4).
ModelProfile vgg(const std::string& name, const std::vector<int>& convs) {
  CostBuilder b(name, kImageNet224);
  const int widths[] = {64, 128, 256, 512, 512};
  for (std::size_t stage = 0; stage < convs.size(); ++stage) {
    for (int i = 0; i < convs[stage]; ++i) b.conv(widths[stage], 3, 1, 1).relu();
    b.maxpool(2, 2);
  }
  b.fc(4096).relu().dropout().fc(4096).relu().dropout().fc(kImageNetClasses).loss();
  return b.take(kImageNetClasses);
}

// ResNet bottleneck (He et al. 2016) as torchvision: 1x1 -> 3x3 (stride here) -> 1x1 (4 x width), batch norm
// after each conv and no conv bias; a 1x1 projection shortcut where the shape changes.
void bottleneck(CostBuilder& b, int width, int stride) {
  const Shape in = b.shape();
  b.conv(width, 1, 1, 0, 1, false).bn().relu();
  b.conv(width, 3, stride, 1, 1, false).bn().relu();
  const Shape out = b.conv(4 * width, 1, 1, 0, 1, false).bn().shape();
  Shape shortcut = in;
  if (stride != 1 || in.c != 4 * width) shortcut = b.at(in).conv(4 * width, 1, stride, 0, 1, false).bn().shape();
  b.at(out).add(shortcut).relu();
}

ModelProfile resnet50() {
  CostBuilder b("resnet50", kImageNet224);
  b.conv(64, 7, 2, 3, 1, false).bn().relu().maxpool(3, 2, 1);  // 64 x 56 x 56
  const int blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int i = 0; i < blocks[stage]; ++i) bottleneck(b, widths[stage], i == 0 && stage > 0 ? 2 : 1);
  }
  b.global_avgpool().fc(kImageNetClasses).loss();
  return b.take(kImageNetClasses);
}

// ResNet basic block (He et al. 2016): 3x3 (stride here) -> 3x3, batch norm after each, no conv bias; a 1x1
// projection shortcut where the shape changes.
void basic_block(CostBuilder& b, int width, int stride) {
  const Shape in = b.shape();
  b.conv(width, 3, stride, 1, 1, false).bn().relu();
  const Shape out = b.conv(width, 3, 1, 1, 1, false).bn().shape();
  Shape shortcut = in;
  if (stride != 1 || in.c != width) shortcut = b.at(in).conv(width, 1, stride, 0, 1, false).bn().shape();
  b.at(out).add(shortcut).relu();
}

// ImageNet ResNets (torchvision): `bottleneck` blocks of 4 x width outputs, else basic blocks.
ModelProfile resnet_imagenet(const std::string& name, const std::vector<int>& blocks, bool bottlenecks) {
  CostBuilder b(name, kImageNet224);
  b.conv(64, 7, 2, 3, 1, false).bn().relu().maxpool(3, 2, 1);  // 64 x 56 x 56
  const int widths[] = {64, 128, 256, 512};
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    for (int i = 0; i < blocks[stage]; ++i) {
      const int stride = i == 0 && stage > 0 ? 2 : 1;
      if (bottlenecks) {
        bottleneck(b, widths[stage], stride);
      } else {
        basic_block(b, widths[stage], stride);
      }
    }
  }
  b.global_avgpool().fc(kImageNetClasses).loss();
  return b.take(kImageNetClasses);
}

// He et al.'s CIFAR-10 ResNet of 6n + 2 layers: a 3x3 conv of 16, three stages of n basic blocks (16, 32, 64).
ModelProfile resnet_cifar(const std::string& name, int n) {
  CostBuilder b(name, {3, 32, 32});
  b.conv(16, 3, 1, 1, 1, false).bn().relu();
  const int widths[] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage) {
    for (int i = 0; i < n; ++i) basic_block(b, widths[stage], i == 0 && stage > 0 ? 2 : 1);
  }
  b.global_avgpool().fc(10).loss();
  return b.take(10);
}

struct ZooEntry {
  const char* name;
  const char* description;
  std::function<ModelProfile()> build;
};

const std::vector<ZooEntry>& zoo() {
  static const std::vector<ZooEntry> entries = {
      {"alexnet", "AlexNet, BVLC Caffe (two-group convolutions), 3x227x227, 1000 classes",
       [] { return alexnet("alexnet", 2); }},
      {"alexnet_cifar", "AlexNet one tower, 3x227x227 (Cifar upscaled), 1000-way output: easgd_hpc's 249 MB",
       [] { return alexnet("alexnet_cifar", 1); }},
      {"googlenet", "GoogLeNet (Inception v1), BVLC Caffe, with its two auxiliary classifiers, 3x224x224",
       [] { return googlenet("googlenet", true); }},
      {"googlenet_noaux", "GoogLeNet without the auxiliary classifiers, 3x224x224",
       [] { return googlenet("googlenet_noaux", false); }},
      {"vgg16", "VGG-16 (config D), 3x224x224, 1000 classes",
       [] {
         return vgg("vgg16", {2, 2, 3, 3, 3});
       }},
      {"vgg19", "VGG-19 (config E), 3x224x224, 1000 classes",
       [] {
         return vgg("vgg19", {2, 2, 4, 4, 4});
       }},
      {"resnet50", "ResNet-50 (torchvision v1.5), 3x224x224, 1000 classes", [] { return resnet50(); }},
      {"vgg_a", "VGG-A (config A, vgg11), 3x224x224, 1000 classes: the MPCA paper's VGG-A",
       [] {
         return vgg("vgg_a", {1, 1, 2, 2, 2});
       }},
      {"resnet34", "ResNet-34 (torchvision), 3x224x224, 1000 classes",
       [] {
         return resnet_imagenet("resnet34", {3, 4, 6, 3}, false);
       }},
      {"resnet152", "ResNet-152 (torchvision), 3x224x224, 1000 classes",
       [] {
         return resnet_imagenet("resnet152", {3, 8, 36, 3}, true);
       }},
      {"resnet110", "CIFAR ResNet-110 (He et al.), 3x32x32, 10 classes, projection shortcuts",
       [] { return resnet_cifar("resnet110", 18); }},
  };
  return entries;
}

const ZooEntry* find(const std::string& name) {
  for (const auto& e : zoo()) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names;
  for (const auto& e : zoo()) names.emplace_back(e.name);
  return names;
}

bool is_zoo_model(const std::string& name) { return find(name) != nullptr; }

std::string zoo_model_description(const std::string& name) {
  const ZooEntry* e = find(name);
  return e ? e->description : "";
}

ModelProfile zoo_model(const std::string& name) {
  const ZooEntry* e = find(name);
  if (!e) throw InputError("", "unknown zoo model '" + name + "'");
  return e->build();
}

ModelProfile model_profile(const std::string& name, int c, int h, int w, int classes) {
  if (is_zoo_model(name)) {
    ModelProfile p = zoo_model(name);
    if (c != p.input.c || classes > p.outputs)
      throw InputError("", "model '" + name + "' takes " + std::to_string(p.input.c) + "-channel samples and has " +
                               std::to_string(p.outputs) + " outputs; the data set has " + std::to_string(c) +
                               " channels and " + std::to_string(classes) + " classes");
    return p;
  }
  const auto known = network_names();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string all;
    for (const auto& n : known) all += n + ", ";
    for (const auto& n : zoo_model_names()) all += n + (n == zoo().back().name ? "" : ", ");
    throw InputError("", "unknown model '" + echo(name) + "' (known: " + all + ")");
  }
  const auto net = make_network(name, Backend::kRef, c, h, w, classes);
  ModelProfile p;
  p.name = name;
  p.input = Shape{c, h, w};
  p.outputs = classes;
  p.num_params = net->num_params();
  p.param_blocks = net->param_blocks();
  p.layers = net->cost();
  return p;
}

}  // namespace dts::model
