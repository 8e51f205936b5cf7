// The host-side costs of a message (issue 19), as platform keys (platforms/README.md, "Host-side costs"):
//   o message_overhead: LogGP's o_s / o_r, the CPU time a message costs its sender and its receiver in the
//     message layer and the network stack, piecewise-linear in the message size as SMPI's smpi/os, smpi/or and
//     smpi/ois: [[min_bytes, a_s, b_s_per_byte], ...], a segment covering sizes from its min_bytes up to the next
//     segment's; a + b * size. The per-byte term is the stack's CPU cost per byte (copies, checksums).
//   o node.copy: a host-device copy (cudaMemcpy): a per-call latency, and from pageable host memory a staging
//     copy into a pinned buffer at a staging bandwidth.
//   o network_stack: the CPU time per byte of the network stack on each end (the kernel's packet processing,
//     a software switch's forwarding), spent while the message's flow runs, not before or after it.
//   o message_noise: a lognormal factor of mean 1 on each message's host-side costs, from the experiment seed.
// Every figure is a plain number at its own JSON pointer, so that a fitter can address it. Absent keys cost
// nothing and change nothing (the resolved platform does not even name them).
#pragma once

#include <vector>

#include "core/config_reader.hpp"

namespace dts::sim {

struct OverheadSegment {
  double min_bytes = 0;     // the segment covers sizes >= min_bytes (up to the next segment's)
  double a_s = 0;           // per message
  double b_s_per_byte = 0;  // per byte
};
// Segments in strictly ascending min_bytes; sizes below the first segment cost nothing (as in SMPI).
using OverheadCurve = std::vector<OverheadSegment>;
double overhead_s(const OverheadCurve& curve, double bytes);

struct MessageOverhead {
  bool given = false;
  OverheadCurve send;   // a blocking send (Comm::send), before its flow starts (smpi/os)
  OverheadCurve isend;  // a non-blocking send (Comm::isend); absent: as `send` (smpi/ois)
  OverheadCurve recv;   // the receiver, once the message has arrived (smpi/or)
};

// Per-byte CPU work that runs alongside a message's flow, as a kernel processes packets while they stream: the
// message is delivered once its flow and both ends' work are done, so it takes max(flow, work) on idle CPUs and
// longer where the work competes with compute or with other messages' work for the cores.
struct NetworkStack {
  bool given = false;
  double send_s_per_byte = 0;  // on the sender's CPU
  double recv_s_per_byte = 0;  // on the receiver's CPU
};

struct MessageNoise {
  bool given = false;
  double sigma = 0;  // lognormal: factor exp(sigma * z - sigma^2 / 2), z standard normal: mean 1
};

struct CopyModel {
  bool given = false;
  double call_latency_s = 0;         // per copy call (driver overhead), CPU time
  bool pageable = false;             // host buffers are pageable: staged through a pinned buffer
  double staging_bandwidth_Bps = 0;  // the staging copy's rate (bytes/s), CPU time; used when pageable
  // The minibatches' host buffers (default: as `pageable`). Caffe's data layer prefetches into pinned memory
  // (cudaMallocHost) while a master's parameters may live in ordinary (pageable) memory.
  bool batch_pageable = false;
  double seconds(double bytes) const  // one call moving `bytes` between host memory and a device
  {
    return call_latency_s + (pageable ? bytes / staging_bandwidth_Bps : 0.0);
  }
  double batch_seconds(double bytes) const  // the copy of a minibatch of `bytes` to a device
  {
    return call_latency_s + (batch_pageable && staging_bandwidth_Bps > 0 ? bytes / staging_bandwidth_Bps : 0.0);
  }
};

// The keys "message_overhead", "network_stack" and "message_noise" of a platform object, and "copy" of its node
// object; each absent key reads as not given and leaves resolved() untouched.
MessageOverhead read_message_overhead(ConfigReader& platform);
MessageNoise read_message_noise(ConfigReader& platform);
NetworkStack read_network_stack(ConfigReader& platform);
CopyModel read_copy_model(ConfigReader& node);

}  // namespace dts::sim
