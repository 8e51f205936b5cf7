// Roofline device model, its element-wise and thread-scaling terms, and the device catalog reader. Every
// term is a factor of exactly 1 at its default (slowdown 1, the kinds' efficiency `efficiency`), so that a
// device without the new keys times every step bit for bit as before them.
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

// Caffe's SGD, momentum and Adam solvers launch four kernels per parameter block and iteration: clearing its
// gradient, the weight-decay axpy, the update value and the update itself (sgd_solver.cpp, Net::Update).
constexpr double kUpdateKernelsPerBlock = 4;

// A pass of a layer with framework terms: the device's time (its roofline at the efficiency, plus the small-call
// time of each of its GEMMs) and the host's (its launches and per-layer work).
struct PassCost {
  double device = 0, host = 0;
};
PassCost pass_cost(const Device& d, double roofline, double kernels, double gemms) {
  if (roofline <= 0 && kernels <= 0) return {};  // a flatten, a backward that never runs
  const double small = gemms * d.half_efficiency_flops / d.peak_flops;
  return {(roofline + small) / d.efficiency * d.thread_scaling.slowdown(d.cores),
          d.layer_overhead_s + kernels * d.launch_s};
}

// The layers' forward and backward times with framework terms. The host launches asynchronously, so within a
// pass (the forward, or the backward) it runs ahead of the device: a pass takes the longer of the two sums.
// Each layer's share of it is its longer side, scaled to the pass.
std::vector<Device::LayerTime> framework_layer_times(const Device& d, const std::vector<model::LayerCost>& layers,
                                                     double b) {
  std::vector<PassCost> fwd, bwd;
  PassCost f_sum, b_sum;
  double f_shares = 0, b_shares = 0;
  for (const auto& l : layers) {
    const auto [f, bw] = layer_roofline(d, l, b);
    const bool backward = l.bwd_flops_per_sample > 0 || l.bwd_kernels > 0;
    fwd.push_back(pass_cost(d, f, l.fwd_kernels, l.fwd_gemms));
    bwd.push_back(backward ? pass_cost(d, bw, l.bwd_kernels, l.bwd_gemms) : PassCost{});
    f_sum.device += fwd.back().device, f_sum.host += fwd.back().host;
    b_sum.device += bwd.back().device, b_sum.host += bwd.back().host;
    f_shares += std::max(fwd.back().device, fwd.back().host);
    b_shares += std::max(bwd.back().device, bwd.back().host);
  }
  const double f_scale = f_shares > 0 ? std::max(f_sum.device, f_sum.host) / f_shares : 0;
  const double b_scale = b_shares > 0 ? std::max(b_sum.device, b_sum.host) / b_shares : 0;
  std::vector<Device::LayerTime> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    out.push_back({std::max(fwd[i].device, fwd[i].host) * f_scale, std::max(bwd[i].device, bwd[i].host) * b_scale});
  }
  return out;
}

// Keys absent from the object keep t's values (a base device's, or 0).
void read_thread_scaling(ConfigReader& r, ThreadScaling& t) {
  if (!r.has("thread_scaling")) return;
  if (!r.raw("thread_scaling").is_object()) r.fail("thread_scaling", "expected {serial_fraction, contention}");
  ConfigReader c = r.child("thread_scaling");
  t.serial_fraction = c.number("serial_fraction", t.serial_fraction, 0, 1);
  t.contention = c.number("contention", t.contention, 0, 1);
  c.finish();
  r.resolved()["thread_scaling"] = c.resolved();
}
}  // namespace

double ThreadScaling::slowdown(int n) const {
  const double c = n;
  return 1 + serial_fraction * (c - 1) + contention * c * (c - 1);
}

double Device::step_time_s(const std::vector<model::LayerCost>& layers, int batch) const {
  double t = 0;
  if (has_framework_terms()) {
    for (const auto& l : framework_layer_times(*this, layers, batch)) t += l.fwd_s + l.bwd_s;
    return t;
  }
  for (const auto& l : layers) {
    const auto [fwd, bwd] = layer_roofline(*this, l, batch);
    t += fwd + bwd;
  }
  return t / efficiency * thread_scaling.slowdown(cores);
}

double Device::forward_time_s(const std::vector<model::LayerCost>& layers, int batch) const {
  double t = 0;
  if (has_framework_terms()) {
    for (const auto& l : framework_layer_times(*this, layers, batch)) t += l.fwd_s;
    return t;
  }
  for (const auto& l : layers) t += layer_roofline(*this, l, batch).first;
  return t / efficiency * thread_scaling.slowdown(cores);
}

std::vector<Device::LayerTime> Device::layer_times_s(const std::vector<model::LayerCost>& layers, int batch) const {
  if (has_framework_terms()) return framework_layer_times(*this, layers, batch);
  const double slowdown = thread_scaling.slowdown(cores);
  std::vector<LayerTime> out;
  for (const auto& l : layers) {
    const auto [fwd, bwd] = layer_roofline(*this, l, batch);
    out.push_back({fwd / efficiency * slowdown, bwd / efficiency * slowdown});
  }
  return out;
}

double Device::efficiency_of(WorkKind kind) const {
  const std::optional<double>& e = kind == WorkKind::kUpdate ? update_efficiency : reduce_efficiency;
  return e.value_or(efficiency);
}

double Device::elementwise_time_s(WorkKind kind, double n, double flops_per_elem, double bytes_per_elem) const {
  return std::max(n * flops_per_elem / peak_flops, n * bytes_per_elem / mem_bw_Bps) / efficiency_of(kind) *
         thread_scaling.slowdown(cores);
}

double Device::update_time_s(double n, double flops_per_elem, double bytes_per_elem, std::size_t blocks) const {
  const double pass = elementwise_time_s(WorkKind::kUpdate, n, flops_per_elem, bytes_per_elem);
  if (launch_s <= 0) return pass;
  return std::max(pass, static_cast<double>(blocks) * kUpdateKernelsPerBlock * launch_s);
}

Device split_device(const Device& chip, int groups) {
  Device d = chip;
  d.name = chip.name + "/" + std::to_string(groups);
  d.peak_flops = chip.peak_flops / groups;
  d.mem_bw_Bps = chip.mem_bw_Bps / groups;
  d.memory_bytes = chip.memory_bytes / groups;
  d.cores = std::max(1, chip.cores / groups);  // a part's thread-scaling slowdown is at its own core count
  return d;
}

Device read_device(ConfigReader& r, const std::string& name, const Device* base) {
  Device d = base != nullptr ? *base : Device{};
  d.name = name;
  if (base == nullptr) {
    d.peak_flops = r.require_number("peak_flops", 1e6, 1e18);
    d.mem_bw_Bps = r.require_number("mem_bw_Bps", 1e6, 1e15);
  } else {
    d.peak_flops = r.number("peak_flops", d.peak_flops, 1e6, 1e18);
    d.mem_bw_Bps = r.number("mem_bw_Bps", d.mem_bw_Bps, 1e6, 1e15);
  }
  d.efficiency = r.number("efficiency", d.efficiency, 1e-3, 1.0);
  d.cores = static_cast<int>(r.integer("cores", d.cores, 1, 1 << 20));
  d.memory_bytes = r.number("memory_bytes", d.memory_bytes, 0, 1e18);
  d.source = r.string("source", d.source);
  if (r.has("peak_flops_fp16")) d.peak_flops_fp16 = r.require_number("peak_flops_fp16", 1e6, 1e18);
  if (r.has("peak_flops_bf16")) d.peak_flops_bf16 = r.require_number("peak_flops_bf16", 1e6, 1e18);
  // Absent, a kind runs at `efficiency`, also where an override changes it. Down to 1e-4: one thread of a
  // 68-core chip streaming at a fraction of its share of the bandwidth is about 1e-3 of the roofline.
  if (r.has("update_efficiency")) d.update_efficiency = r.number("update_efficiency", 1.0, 1e-4, 1.0);
  if (r.has("reduce_efficiency")) d.reduce_efficiency = r.number("reduce_efficiency", 1.0, 1e-4, 1.0);
  read_thread_scaling(r, d.thread_scaling);
  d.launch_s = r.number("launch_s", d.launch_s, 0, 1);
  d.layer_overhead_s = r.number("layer_overhead_s", d.layer_overhead_s, 0, 1);
  d.half_efficiency_flops = r.number("half_efficiency_flops", d.half_efficiency_flops, 0, 1e15);
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
