// `dtsim list`: what an experiment may name: algorithms, models, data sets, and (with the simulator) the
// platform files and device catalog that ship in platforms/.
#include "experiments/list.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "algorithms/algorithm.hpp"
#include "core/json_input.hpp"
#include "experiments/runner/datasets.hpp"
#include "kernels/model/network.hpp"
#include "kernels/model/zoo_modeled.hpp"
#ifdef DTS_WITH_SIM
#include "sim/device.hpp"
#endif

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

void list_platforms(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string stem = e.path().stem().string();
    if (e.path().extension() == ".json" && stem != "devices" && stem != "links") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::cout << "\nplatforms (" << dir.string() << "; an experiment's \"platform\" names the file):\n";
  for (const auto& f : files) {
    const nlohmann::json j = read_json_file(f.string(), "platform file");
    const auto text = [&](const char* key, const char* def) {
      return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string(def);
    };
    std::string device = j.contains("device") && j["device"].is_string() ? text("device", "") : "inline";
    if (j.contains("device") && j["device"].is_object() && j["device"].contains("base") &&
        j["device"]["base"].is_string()) {
      device = j["device"]["base"].get<std::string>() + " (and its own keys)";  // {"base": NAME, ...}
    }
    std::printf("  %-28s %-10s device %s\n", f.filename().string().c_str(), text("topology", "star").c_str(),
                device.c_str());
  }
}

}  // namespace

void list_catalog(const std::string& source_dir) {
  std::cout << "algorithms:";
  for (const auto& n : algorithm_names()) std::cout << ' ' << n;
  std::cout << "\nmodels:";
  for (const auto& n : model::network_names()) std::cout << ' ' << n;
  std::cout << "\nmodeled-only models (\"numerics\": \"modeled\"):\n";
  for (const auto& n : model::zoo_model_names()) {
    const auto p = model::zoo_model(n);
    std::printf("  %-16s %12zu params  %6.2f GMAC/sample  %s\n", n.c_str(), p.num_params, p.fwd_macs_per_sample / 1e9,
                model::zoo_model_description(n).c_str());
  }
  std::cout << "data sets (\"data\": {\"name\": ...}):\n";
  for (const auto& d : dataset_catalog()) {
    std::printf("  %-14s %-8s %-44s %s\n", d.name.c_str(), d.numerics.c_str(), d.shape.c_str(), d.source.c_str());
  }
#ifdef DTS_WITH_SIM
  const fs::path platforms = fs::path(source_dir) / "platforms";
  if (!fs::is_directory(platforms)) return;  // an installed dtsim without its source tree
  list_platforms(platforms);
  const std::string catalog = (platforms / "devices.json").string();
  std::cout << "\ndevices (" << catalog << "; \"device\": NAME, or NAME:fp16 / NAME:bf16 for a half-precision peak):\n";
  std::printf("  %-24s %10s %10s %10s %10s %8s\n", "name", "fp32 TF/s", "fp16 TF/s", "bf16 TF/s", "mem GB/s", "mem GB");
  const auto tf = [](const std::optional<double>& v) { return v ? std::to_string(*v / 1e12).substr(0, 6) : "-"; };
  for (const sim::Device& d : sim::catalog_devices(catalog)) {
    std::printf("  %-24s %10.2f %10s %10s %10.0f %8s\n", d.name.c_str(), d.peak_flops / 1e12,
                tf(d.peak_flops_fp16).c_str(), tf(d.peak_flops_bf16).c_str(), d.mem_bw_Bps / 1e9,
                d.memory_bytes > 0 ? std::to_string(static_cast<int>(d.memory_bytes / 1e9)).c_str() : "-");
  }
#else
  (void)source_dir;
#endif
}

}  // namespace dts::exp
