// `dtsim list --model NAME`: the device model's step time of a model on every catalog device.
#include "experiments/step_times.hpp"

#include <cstdio>
#include <filesystem>

#include "kernels/model/zoo_modeled.hpp"
#include "sim/device.hpp"

namespace dts::exp {

void print_step_times(const std::string& source_dir, const StepTimeQuery& q) {
  const bool cifar = q.model.find("cifar") != std::string::npos;
  const int c = q.channels > 0 ? q.channels : (cifar ? 3 : 1), h = q.height > 0 ? q.height : (cifar ? 32 : 28),
            w = q.width > 0 ? q.width : h;
  const model::ModelProfile p =
      model::is_zoo_model(q.model) ? model::zoo_model(q.model) : model::model_profile(q.model, c, h, w, q.classes);
  double kernels = 0, gemms = 0;
  for (const auto& l : p.layers) {
    kernels += l.fwd_kernels + l.bwd_kernels;
    gemms += l.fwd_gemms + l.bwd_gemms;
  }
  std::printf("%s, batch %d: %zu parameters, %zu layers, %.0f kernels and %.0f GEMM calls per forward-backward\n",
              p.name.c_str(), q.batch, p.num_params, p.layers.size(), kernels, gemms);
  std::printf("  %-24s %12s %12s %12s\n", "device", "roofline ms", "modeled ms", "forward ms");
  const std::string catalog = (std::filesystem::path(source_dir) / "platforms" / "devices.json").string();
  for (const sim::Device& d : sim::catalog_devices(catalog)) {
    sim::Device bare = d;  // the roofline alone: no framework terms
    bare.launch_s = bare.layer_overhead_s = bare.half_efficiency_flops = 0;
    std::printf("  %-24s %12.4f %12.4f %12.4f\n", d.name.c_str(), bare.step_time_s(p.layers, q.batch) * 1e3,
                d.step_time_s(p.layers, q.batch) * 1e3, d.forward_time_s(p.layers, q.batch) * 1e3);
  }
}

}  // namespace dts::exp
