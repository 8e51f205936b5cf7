// The "data" section of an experiment: which data set, where its files are. Reading happens here, before any
// output exists, so a missing or truncated file fails the run with nothing written. A modeled data set
// ("modeled": true, for modeled numerics) is a sample shape and counts only: no file is read, no sample held.
#include <filesystem>

#include "algorithms/api/config_reader.hpp"
#include "experiments/runner/datasets.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {
std::string resolve(const std::string& base_dir, const std::string& p) {
  return fs::path(p).is_absolute() ? p : (fs::path(base_dir) / p).lexically_normal().string();
}
std::string must_exist(ConfigReader& r, const std::string& key, const std::string& path) {
  if (!fs::exists(path)) r.fail(key, "data file not found: " + path);
  return path;
}

// Shape and counts of a well-known data set, or of a synthetic one; train_samples and test_samples may be
// overridden (a subset, or a larger set of the same shape).
void read_modeled(ConfigReader& r, DataSets& ds) {
  struct Preset {
    const char* name;
    int c, h, w, classes, train, test;
  };
  // ImageNet: ILSVRC-2012 train and validation sets at the usual 224 x 224 crop.
  static const Preset presets[] = {{"imagenet", 3, 224, 224, 1000, 1'281'167, 50'000},
                                   {"cifar10", 3, 32, 32, 10, 50'000, 10'000},
                                   {"fashion_mnist", 1, 28, 28, 10, 60'000, 10'000},
                                   {"synthetic", 1, 8, 8, 10, 4096, 1024}};
  const std::string name = r.choice("name", "fashion_mnist", {"imagenet", "cifar10", "fashion_mnist", "synthetic"});
  const Preset* p = presets;
  while (name != p->name) ++p;
  data::Dataset& d = ds.train;
  d.name = name;
  d.c = p->c, d.h = p->h, d.w = p->w, d.classes = p->classes;
  if (name == "synthetic") {
    d.c = static_cast<int>(r.integer("channels", p->c, 1, 4096));
    d.h = static_cast<int>(r.integer("height", p->h, 1, 4096));
    d.w = static_cast<int>(r.integer("width", p->w, 1, 4096));
    d.classes = static_cast<int>(r.integer("classes", p->classes, 2, 100000));
  }
  d.n = static_cast<int>(r.integer("train_samples", p->train, 1, 1'000'000'000));
  ds.test = d;
  ds.test.n = static_cast<int>(r.integer("test_samples", p->test, 1, 1'000'000'000));
}

}  // namespace

std::shared_ptr<const DataSets> read_datasets(ConfigReader& r, const std::string& base_dir, std::uint64_t seed) {
  auto ds = std::make_shared<DataSets>();
  if (r.boolean("modeled", false)) {
    read_modeled(r, *ds);
    r.finish();
    ds->modeled = true;
    ds->resolved = r.resolved();
    ds->resolved["channels"] = ds->train.c;
    ds->resolved["height"] = ds->train.h;
    ds->resolved["width"] = ds->train.w;
    ds->resolved["classes"] = ds->train.classes;
    return ds;
  }
  const std::string name = r.choice("name", "fashion_mnist", {"fashion_mnist", "idx", "cifar10", "synthetic"});
  if (name == "fashion_mnist") {
    const std::string dir = resolve(base_dir, r.string("dir", "/usr/share/datasets/fashion-mnist"));
    auto file = [&](const char* f) { return must_exist(r, "dir", (fs::path(dir) / f).string()); };
    ds->train = data::read_idx(file("train-images-idx3-ubyte.gz"), file("train-labels-idx1-ubyte.gz"));
    ds->test = data::read_idx(file("t10k-images-idx3-ubyte.gz"), file("t10k-labels-idx1-ubyte.gz"));
  } else if (name == "idx") {
    auto file = [&](const char* key) { return must_exist(r, key, resolve(base_dir, r.require_string(key))); };
    const std::string ti = file("train_images"), tl = file("train_labels");
    const std::string vi = file("test_images"), vl = file("test_labels");
    ds->train = data::read_idx(ti, tl);
    ds->test = data::read_idx(vi, vl);
  } else if (name == "cifar10") {
    const std::string dir = resolve(base_dir, r.require_string("dir"));
    std::vector<std::filesystem::path> train;
    for (int i = 1; i <= 5; ++i) train.emplace_back(must_exist(r, "dir", dir + "/data_batch_" + std::to_string(i) + ".bin"));
    ds->train = data::read_cifar10(train);
    ds->test = data::read_cifar10({must_exist(r, "dir", dir + "/test_batch.bin")});
  } else {
    const int n = static_cast<int>(r.integer("train_samples", 4096, 1, 10'000'000));
    const int n_test = static_cast<int>(r.integer("test_samples", 1024, 1, 10'000'000));
    const int c = static_cast<int>(r.integer("channels", 1, 1, 4096));
    const int h = static_cast<int>(r.integer("height", 8, 1, 4096));
    const int w = static_cast<int>(r.integer("width", 8, 1, 4096));
    const int classes = static_cast<int>(r.integer("classes", 10, 2, 100000));
    // Train and test are two halves of one draw, so that they share the class means.
    data::Dataset all = data::synthetic(seed, n + n_test, c, h, w, classes);
    ds->train = all;
    ds->test = all;
    ds->train.n = n;
    ds->train.x.resize(static_cast<std::size_t>(n) * all.sample_size());
    ds->train.y.resize(static_cast<std::size_t>(n));
    ds->test.n = n_test;
    ds->test.x.assign(all.x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * all.sample_size()), all.x.end());
    ds->test.y.assign(all.y.begin() + n, all.y.end());
  }
  r.finish();
  ds->resolved = r.resolved();
  ds->resolved["train_samples"] = ds->train.n;
  ds->resolved["test_samples"] = ds->test.n;
  return ds;
}

}  // namespace dts::exp
