// The "data" section of an experiment: which data set, where its files are. Reading happens here, before any
// output exists, so a bad data file fails the run (and --check) with nothing written, its error naming the
// experiment's key as well as the file. Train and test must agree: the same sample shape, and test labels
// within the training set's classes (the model is built from the training set). A modeled data set
// ("modeled": true, for modeled numerics) is a sample shape and counts only: no file is read, no sample held.
#include <filesystem>

#include "core/config_reader.hpp"
#include "experiments/runner/datasets.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {
std::string resolve(const std::string& base_dir, const std::string& p) {
  return fs::path(p).is_absolute() ? p : (fs::path(base_dir) / p).lexically_normal().string();
}

// read_idx, its InputError (which names the data file) rethrown under the key that gave that file.
data::Dataset read_idx(ConfigReader& r, const std::string& images_key, const std::string& images,
                       const std::string& labels_key, const std::string& labels) {
  try {
    return data::read_idx(images, labels);
  } catch (const InputError& e) {
    r.fail(e.where() == labels ? labels_key : images_key, e.what());
  }
}

data::Dataset read_cifar10(ConfigReader& r, const std::vector<fs::path>& batches) {
  try {
    return data::read_cifar10(batches);
  } catch (const InputError& e) {
    r.fail("dir", e.what());
  }
}

std::string shape(const data::Dataset& d) {
  std::string s = "(";  // appended, not "(" + ...: GCC 12 warns falsely (-Wrestrict) on that operator+
  s += std::to_string(d.c) + ", " + std::to_string(d.h) + ", " + std::to_string(d.w) + ")";
  return s;
}

// The test set must fit what is built from the training set: the same (c, h, w), and labels below its
// class count. The test set then takes that count (a test set may lack the last classes). The keys and files
// are the test set's (for a directory, the directory).
void check_agree(ConfigReader& r, DataSets& ds, const std::string& images_key, const std::string& images,
                 const std::string& labels_key, const std::string& labels) {
  const data::Dataset &train = ds.train, &test = ds.test;
  if (test.c != train.c || test.h != train.h || test.w != train.w) {
    r.fail(images_key, images + ": the test samples are " + shape(test) + " (c, h, w) but the training samples " +
                           shape(train) + ": train and test must have the same sample shape");
  }
  if (test.classes > train.classes) {
    r.fail(labels_key, labels + ": the test labels need " + std::to_string(test.classes) +
                           " classes but the training labels " + std::to_string(train.classes) + " (labels 0.." +
                           std::to_string(train.classes - 1) + "): the model's outputs are the training set's classes");
  }
  ds.test.classes = train.classes;
}

// The synthetic set's sizes against data::kMaxSampleValues, before anything is allocated.
void check_synthetic_size(ConfigReader& r, std::int64_t samples, std::int64_t classes, std::int64_t d) {
  // samples <= 2e7, classes <= 1e5, d <= 4096^3: the products stay far below 2^63.
  const auto limit = static_cast<std::int64_t>(data::kMaxSampleValues);
  const std::string tail = " values, more than the limit of " + std::to_string(limit) + " (4 GiB as floats)";
  if (samples * d > limit) {
    r.fail("train_samples", "the synthetic set's (train_samples + test_samples) x channels x height x width = " +
                                std::to_string(samples) + " x " + std::to_string(d) + tail);
  }
  if (classes * d > limit) {
    r.fail("classes", "the synthetic set's class means, classes x channels x height x width = " +
                          std::to_string(classes) + " x " + std::to_string(d) + tail);
  }
}

struct Preset {
  const char* name;
  int c, h, w, classes, train, test;
};
// Modeled numerics: shapes and counts. ImageNet: ILSVRC-2012 train and validation sets at the usual 224 x 224 crop.
constexpr Preset kPresets[] = {{"imagenet", 3, 224, 224, 1000, 1'281'167, 50'000},
                               {"cifar10", 3, 32, 32, 10, 50'000, 10'000},
                               {"fashion_mnist", 1, 28, 28, 10, 60'000, 10'000},
                               {"synthetic", 1, 8, 8, 10, 4096, 1024}};

// Shape and counts of a well-known data set, or of a synthetic one; train_samples and test_samples may be
// overridden (a subset, or a larger set of the same shape).
void read_modeled(ConfigReader& r, DataSets& ds) {
  const std::string name = r.choice("name", "fashion_mnist", {"imagenet", "cifar10", "fashion_mnist", "synthetic"});
  const Preset* p = kPresets;
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
    auto file = [&](const char* f) { return (fs::path(dir) / f).string(); };
    ds->train = read_idx(r, "dir", file("train-images-idx3-ubyte.gz"), "dir", file("train-labels-idx1-ubyte.gz"));
    ds->test = read_idx(r, "dir", file("t10k-images-idx3-ubyte.gz"), "dir", file("t10k-labels-idx1-ubyte.gz"));
    check_agree(r, *ds, "dir", dir, "dir", dir);
  } else if (name == "idx") {
    auto file = [&](const char* key) { return resolve(base_dir, r.require_string(key)); };
    const std::string ti = file("train_images"), tl = file("train_labels");
    const std::string vi = file("test_images"), vl = file("test_labels");
    ds->train = read_idx(r, "train_images", ti, "train_labels", tl);
    ds->test = read_idx(r, "test_images", vi, "test_labels", vl);
    check_agree(r, *ds, "test_images", vi, "test_labels", vl);
  } else if (name == "cifar10") {
    const std::string dir = resolve(base_dir, r.require_string("dir"));
    std::vector<fs::path> train;
    for (int i = 1; i <= 5; ++i) train.emplace_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
    ds->train = read_cifar10(r, train);
    ds->test = read_cifar10(r, {dir + "/test_batch.bin"});
    check_agree(r, *ds, "dir", dir, "dir", dir);
  } else {
    const int n = static_cast<int>(r.integer("train_samples", 4096, 1, 10'000'000));
    const int n_test = static_cast<int>(r.integer("test_samples", 1024, 1, 10'000'000));
    const int c = static_cast<int>(r.integer("channels", 1, 1, 4096));
    const int h = static_cast<int>(r.integer("height", 8, 1, 4096));
    const int w = static_cast<int>(r.integer("width", 8, 1, 4096));
    const int classes = static_cast<int>(r.integer("classes", 10, 2, 100000));
    check_synthetic_size(r, std::int64_t{n} + n_test, classes, std::int64_t{c} * h * w);
    // Train and test are two halves of one draw, so that they share the class means.
    data::Dataset all = data::synthetic(seed, n + n_test, c, h, w, classes);
    const auto split = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * all.sample_size());
    ds->test = {all.name, n_test, c, h, w, classes, {}, {}};
    ds->test.x.assign(all.x.begin() + split, all.x.end());
    ds->test.y.assign(all.y.begin() + n, all.y.end());
    ds->train = std::move(all);  // no third copy of the samples: the draw becomes the training set
    ds->train.n = n;
    ds->train.x.resize(static_cast<std::size_t>(split));
    ds->train.y.resize(static_cast<std::size_t>(n));
  }
  r.finish();
  ds->resolved = r.resolved();
  ds->resolved["train_samples"] = ds->train.n;
  ds->resolved["test_samples"] = ds->test.n;
  return ds;
}

std::vector<DatasetInfo> dataset_catalog() {
  std::vector<DatasetInfo> out = {
      {"fashion_mnist", "real", "1x28x28, 10 classes, 60000 + 10000",
       "IDX files in data.dir (default /usr/share/datasets/fashion-mnist, Debian's dataset-fashion-mnist)"},
      {"idx", "real", "from the files",
       "any IDX image and label files: train_images, train_labels, test_images, test_labels"},
      {"cifar10", "real", "3x32x32, 10 classes, 50000 + 10000", "the binary version's batches in data.dir"},
      {"synthetic", "real", "CxHxW, classes: default 1x8x8, 10",
       "drawn from the seed: Gaussian classes around random means"},
  };
  for (const Preset& p : kPresets) {
    out.push_back({p.name, "modeled",
                   std::to_string(p.c) + "x" + std::to_string(p.h) + "x" + std::to_string(p.w) + ", " +
                       std::to_string(p.classes) + " classes, " + std::to_string(p.train) + " + " +
                       std::to_string(p.test),
                   "shapes and counts only (data.modeled: true)"});
  }
  return out;
}

}  // namespace dts::exp
