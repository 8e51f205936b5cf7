// The device model that turns work into simulated time (DESIGN.md §3): a roofline per layer,
// t = max(flops / peak_flops, bytes / mem_bw) / efficiency, summed over the layers of a step; or a
// calibrated step time when a published measurement exists. Element-wise passes (optimizer steps, update
// rules, the additions of reductions) have an efficiency of their own per kind. A many-core device's
// thread-scaling curve stretches every term by how far its cores fall short of linear scaling, so that a
// part of the chip (split_device) loses less than the whole. Host wall-clock never enters.
// A framework driving a GPU (Caffe and its peers) adds what a bare roofline misses on small networks: the host's
// time to launch each kernel and to run each layer's bookkeeping, which the device's work overlaps (a pass of a
// layer takes the longer of the two), and GEMM and convolution calls too small to reach the roofline's
// efficiency. Each term is off at its default, which times every step bit for bit as without it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config_reader.hpp"
#include "kernels/model/network.hpp"

namespace dts::sim {

// What an element-wise pass is for. kUpdate: an optimizer step or an update rule on the model (SGD, the
// elastic moves, averaging with a peer); kReduce: the additions of a reduction (a collective's sums, a
// server's aggregation of its workers' pushes).
enum class WorkKind : std::uint8_t { kUpdate, kReduce };

// The Universal Scalability Law (Gunther): n cores working on one problem run n / (1 + s (n - 1) +
// k n (n - 1)) times as fast as one core. s (serial_fraction) is the share that does not parallelize (Amdahl),
// k (contention) the pairwise coherence and synchronization cost among the threads. All 0: linear.
struct ThreadScaling {
  double serial_fraction = 0;
  double contention = 0;
  // The time of work on n cores over its time at linear scaling: 1 + s (n - 1) + k n (n - 1).
  double slowdown(int n) const;
};

struct Device {
  std::string name;
  double peak_flops = 1e12;  // fp32 flop/s of the whole device
  double mem_bw_Bps = 1e11;  // bytes/s
  double efficiency = 1.0;   // achieved fraction of the roofline, in (0, 1]
  int cores = 1;             // the cores one problem runs on; a chip partition gets cores / P (68 / P on a KNL)
  double memory_bytes = 0;   // device memory (MCDRAM on a KNL); 0: not modeled
  std::string source;        // where the figures come from
  // Half-precision peaks (tensor cores), when the catalog gives them; "NAME:fp16" / "NAME:bf16" in a platform
  // takes one of them as peak_flops (catalog lookups only).
  std::optional<double> peak_flops_fp16, peak_flops_bf16;
  // Achieved fraction of the roofline of element-wise passes of each kind, in (0, 1] (unset: `efficiency`).
  // The F/B efficiency is that of convolution and matrix kernels; a streaming update or a reduction loop is
  // often run by fewer threads (a framework's single-threaded CPU update, an MPI library's reduction on one
  // core), so that it reaches a different share of the device's bandwidth.
  std::optional<double> update_efficiency, reduce_efficiency;
  // How the device's speed scales with its cores: peak_flops and mem_bw_Bps are `cores` times one core's, and
  // every roofline term is stretched by thread_scaling.slowdown(cores) (1 by default).
  ThreadScaling thread_scaling;
  // The framework's host-side costs (seconds): launching one kernel, and one layer's work per pass.
  double launch_s = 0;
  double layer_overhead_s = 0;
  // A GEMM or convolution call of W flops runs at efficiency x W / (W + half_efficiency_flops): it takes
  // half_efficiency_flops / (efficiency x peak_flops) beyond its roofline time (the floor of a tiny call).
  double half_efficiency_flops = 0;
  bool has_framework_terms() const { return launch_s > 0 || layer_overhead_s > 0 || half_efficiency_flops > 0; }

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
  // An element-wise pass of `kind` over n elements of `flops_per_elem` flops and `bytes_per_elem` bytes each:
  // max(n flops / peak_flops, n bytes / mem_bw_Bps) / (the kind's efficiency) x the thread-scaling slowdown.
  double elementwise_time_s(WorkKind kind, double n, double flops_per_elem, double bytes_per_elem) const;
  // An optimizer step over n parameters in `blocks` parameter blocks: the element-wise pass of kind kUpdate, or
  // the framework's launches of its per-block kernels where those take longer (the host issues them while the
  // device runs the earlier ones).
  double update_time_s(double n, double flops_per_elem, double bytes_per_elem, std::size_t blocks) const;
  // The achieved fraction of the roofline of an element-wise pass of `kind`.
  double efficiency_of(WorkKind kind) const;
};

// One of `groups` equal parts of a chip (KNL partitioning, papers/easgd_hpc.md §5.8): 1 / groups of its
// peak flops, memory bandwidth, memory and cores, the same efficiencies and thread-scaling curve (so a part
// of fewer cores is stretched less than the whole chip); the name gets a "/groups" suffix.
Device split_device(const Device& chip, int groups);

// Reads a device object ({"peak_flops", "mem_bw_Bps", "efficiency", "cores", "memory_bytes", "source",
// "update_efficiency", "reduce_efficiency", "thread_scaling": {"serial_fraction", "contention"}, "launch_s",
// "layer_overhead_s", "half_efficiency_flops"}). With a
// `base` device every key is optional and overrides the base's figure (a catalog device with fitted terms).
Device read_device(ConfigReader& r, const std::string& name, const Device* base = nullptr);
// Looks `name` up in a catalog file (platforms/devices.json): {"devices": {"name": {...}, ...}}. "NAME:fp16" or
// "NAME:bf16" is NAME computing at that precision's peak (an input error where the catalog gives none).
Device find_device(const std::string& catalog_file, const std::string& name, const std::string& where);
// Every device of a catalog file, by name.
std::vector<Device> catalog_devices(const std::string& catalog_file);

}  // namespace dts::sim
