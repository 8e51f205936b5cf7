// The device model that turns work into simulated time (DESIGN.md §3): a roofline per layer,
// t = max(flops / peak_flops, bytes / mem_bw) / efficiency, summed over the layers of a step; or a
// calibrated step time when a published measurement exists. Host wall-clock never enters.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_reader.hpp"
#include "kernels/model/network.hpp"

namespace dts::sim {

struct Device {
  std::string name;
  double peak_flops = 1e12;  // fp32 flop/s of the whole device
  double mem_bw_Bps = 1e11;  // bytes/s
  double efficiency = 1.0;   // achieved fraction of the roofline, in (0, 1]
  int cores = 1;             // informational, and the share a chip partition gets (68 / P on a KNL)
  double memory_bytes = 0;   // device memory (MCDRAM on a KNL); 0: not modeled
  std::string source;        // where the figures come from
  // Half-precision peaks (tensor cores), when the catalog gives them; "NAME:fp16" / "NAME:bf16" in a platform
  // takes one of them as peak_flops (catalog lookups only).
  std::optional<double> peak_flops_fp16, peak_flops_bf16;

  // Forward + backward of one minibatch of `batch` samples.
  double step_time_s(const std::vector<model::LayerCost>& layers, int batch) const;
  // Its forward pass alone (the first term of each layer in step_time_s).
  double forward_time_s(const std::vector<model::LayerCost>& layers, int batch) const;
  // Forward and backward time of each layer for a minibatch of `batch` samples, the terms that step_time_s
  // sums (per-layer timing of the backward pass, for Compute::forward_backward_hooked).
  struct LayerTime {
    double fwd_s = 0, bwd_s = 0;
  };
  std::vector<LayerTime> layer_times_s(const std::vector<model::LayerCost>& layers, int batch) const;
  // An elementwise pass over n floats touching `streams` vectors, with `flops_per_elem` arithmetic.
  double elementwise_time_s(double n, double streams, double flops_per_elem = 1.0) const;
};

// One of `groups` equal parts of a chip (KNL partitioning, papers/easgd_hpc.md §5.8): 1 / groups of its
// peak flops, memory bandwidth, memory and cores; the name gets a "/groups" suffix.
Device split_device(const Device& chip, int groups);

// Reads a device object ({"peak_flops", "mem_bw_Bps", "efficiency", "cores", "memory_bytes", "source"}).
Device read_device(ConfigReader& r, const std::string& name);
// Looks `name` up in a catalog file (platforms/devices.json): {"devices": {"name": {...}, ...}}. "NAME:fp16" or
// "NAME:bf16" is NAME computing at that precision's peak (an input error where the catalog gives none).
Device find_device(const std::string& catalog_file, const std::string& name, const std::string& where);
// Every device of a catalog file, by name.
std::vector<Device> catalog_devices(const std::string& catalog_file);

}  // namespace dts::sim
