// Roofline device model and the device catalog reader.
#include "sim/device.hpp"

#include <algorithm>
#include <utility>

namespace dts::sim {

namespace {
// One layer's roofline forward and backward times before the efficiency: the forward reads the weights once;
// the backward reads them and writes their gradient.
std::pair<double, double> layer_roofline(const Device& d, const model::LayerCost& l, double b) {
  const double fwd =
      std::max(b * l.fwd_flops_per_sample / d.peak_flops, (b * l.fwd_bytes_per_sample + l.param_bytes) / d.mem_bw_Bps);
  const double bwd = std::max(b * l.bwd_flops_per_sample / d.peak_flops,
                              (b * l.bwd_bytes_per_sample + 2 * l.param_bytes) / d.mem_bw_Bps);
  return {fwd, bwd};
}
}  // namespace

double Device::step_time_s(const std::vector<model::LayerCost>& layers, int batch) const {
  double t = 0;
  for (const auto& l : layers) {
    const auto [fwd, bwd] = layer_roofline(*this, l, batch);
    t += fwd + bwd;
  }
  return t / efficiency;
}

double Device::forward_time_s(const std::vector<model::LayerCost>& layers, int batch) const {
  double t = 0;
  for (const auto& l : layers) t += layer_roofline(*this, l, batch).first;
  return t / efficiency;
}

std::vector<Device::LayerTime> Device::layer_times_s(const std::vector<model::LayerCost>& layers, int batch) const {
  std::vector<LayerTime> out;
  for (const auto& l : layers) {
    const auto [fwd, bwd] = layer_roofline(*this, l, batch);
    out.push_back({fwd / efficiency, bwd / efficiency});
  }
  return out;
}

double Device::elementwise_time_s(double n, double streams, double flops_per_elem) const {
  return std::max(n * flops_per_elem / peak_flops, n * streams * sizeof(float) / mem_bw_Bps) / efficiency;
}

Device split_device(const Device& chip, int groups) {
  Device d = chip;
  d.name = chip.name + "/" + std::to_string(groups);
  d.peak_flops = chip.peak_flops / groups;
  d.mem_bw_Bps = chip.mem_bw_Bps / groups;
  d.memory_bytes = chip.memory_bytes / groups;
  d.cores = std::max(1, chip.cores / groups);
  return d;
}

Device read_device(ConfigReader& r, const std::string& name) {
  Device d;
  d.name = name;
  d.peak_flops = r.require_number("peak_flops", 1e6, 1e18);
  d.mem_bw_Bps = r.require_number("mem_bw_Bps", 1e6, 1e15);
  d.efficiency = r.number("efficiency", 1.0, 1e-3, 1.0);
  d.cores = static_cast<int>(r.integer("cores", 1, 1, 1 << 20));
  d.memory_bytes = r.number("memory_bytes", 0, 0, 1e18);
  d.source = r.string("source", "");
  if (r.has("peak_flops_fp16")) d.peak_flops_fp16 = r.require_number("peak_flops_fp16", 1e6, 1e18);
  if (r.has("peak_flops_bf16")) d.peak_flops_bf16 = r.require_number("peak_flops_bf16", 1e6, 1e18);
  r.finish();
  return d;
}

Device find_device(const std::string& catalog_file, const std::string& name, const std::string& where) {
  const nlohmann::json j = read_json_file(catalog_file, "device catalog");
  ConfigReader root(j, catalog_file, "");
  ConfigReader devices = root.child("devices");
  const auto colon = name.rfind(':');
  const std::string base = colon == std::string::npos ? name : name.substr(0, colon);
  const std::string precision = colon == std::string::npos ? "" : name.substr(colon + 1);
  if (!devices.has(base))
    throw ConfigError(where, "unknown device \"" + echo(base) + "\" (not in " + catalog_file + ")");
  ConfigReader entry = devices.child(base);
  Device d = read_device(entry, base);
  if (precision.empty()) return d;
  if (precision != "fp16" && precision != "bf16")
    throw ConfigError(where, "unknown precision \"" + echo(precision) + "\" in \"" + echo(name) +
                                 "\" (expected NAME, NAME:fp16 or NAME:bf16)");
  const std::optional<double>& peak = precision == "fp16" ? d.peak_flops_fp16 : d.peak_flops_bf16;
  if (!peak.has_value())
    throw ConfigError(where, "device \"" + echo(base) + "\" has no peak_flops_" + precision + " in " + catalog_file);
  d.peak_flops = peak.value();
  d.name = name;
  return d;
}

std::vector<Device> catalog_devices(const std::string& catalog_file) {
  const nlohmann::json j = read_json_file(catalog_file, "device catalog");
  ConfigReader root(j, catalog_file, "");
  const nlohmann::json& all = root.raw("devices");
  if (!all.is_object()) root.fail("devices", "expected an object of devices by name");
  ConfigReader devices = root.child("devices");
  std::vector<Device> out;
  for (const auto& [name, value] : all.items()) {
    ConfigReader entry = devices.child(name);
    out.push_back(read_device(entry, name));
  }
  return out;
}

}  // namespace dts::sim
