// The host-side costs of messages at run time (keys: sim/message_cost_spec.hpp). Where each cost goes:
//   o Between nodes (and between the hosts of a node without a CPU host, a chip's groups included): the sender
//     pays its overhead (message_overhead send, or isend) before its flow starts, the receiver its overhead
//     (recv) once the flow has arrived, before the receive completes. An end that is a device of a node with
//     a CPU host also pays one copy (node.copy) between device and host memory: the message stages there.
//   o Inside a node, between a device and its CPU or two of its devices: no message layer, one copy call,
//     charged before the flow (a device-device peer copy pays the call latency alone, no staging).
//   o Messages between two ranks of one host cost nothing, as before.
// Each cost is CPU time: an execution of one core's worth on the CPU that does the work (the host of a
// single-host node or a chip group; the node's CPU host for its devices; the shared machine with
// machine_cores), so it competes with compute there as SimGrid shares the host. A device of a node with no CPU host
// pays a delay of the calling actor instead: no CPU is modeled whose compute it could slow, and charging the device
// would slow its kernels. network_stack's per-byte work runs on the same CPUs as message_overhead, but alongside the
// flow (between nodes only): the message is delivered once the flow and both ends' work are done. With message_noise,
// each end's cost of message `index` of rank `src` is multiplied by its own lognormal factor, drawn from (seed, src,
// index): the same for every run, whatever the order of events.
#pragma once

#include <cstdint>
#include <functional>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>

#include "algorithms/api/request.hpp"
#include "sim/platform.hpp"

namespace dts::sim {

inline constexpr const char* kNodeCpuProperty = "dts_node_cpu";  // device property: its node's CPU host

// CPU work that blocks the calling actor until done: `seconds` of one of the `cores` cores of host `on`
// (null: a delay of `seconds`).
struct HostCharge {
  simgrid::s4u::Host* on = nullptr;
  int cores = 1;
  double seconds = 0;
  void pay() const;
  // Starts the work without blocking and returns it, to be waited for; null when there is none, or when it is
  // a delay (no CPU to charge: `on` null).
  simgrid::s4u::ExecPtr start() const;
};

struct MessageCharge {
  HostCharge sender;                        // before the flow, by the sending actor
  HostCharge receiver;                      // after the flow, before delivery
  HostCharge sender_stack, receiver_stack;  // network_stack: alongside the flow
  bool stack = false;                       // whether there is stack work
  // Runs `flow`, which blocks until the message's bytes have crossed, with both ends' stack work alongside it,
  // and returns once all are done (a delay, for an end with no CPU, counts from the flow's start).
  void alongside(const std::function<void()>& flow) const;
};

class MessageCosts {
 public:
  // After the platform is built. `seed`: the experiment's.
  MessageCosts(const PlatformSpec& spec, std::uint64_t seed);
  // Whether any cost is given (otherwise the world needs none).
  bool active() const { return overhead_.given || stack_.given || copy_.given; }
  // Message `index` of rank `src` (its count of sends before it), of `bytes`; `blocking`: a Comm::send.
  MessageCharge charge(Rank src, std::uint64_t index, simgrid::s4u::Host* src_host, simgrid::s4u::Host* dst_host,
                       double bytes, bool blocking);

 private:
  struct End {
    simgrid::s4u::Host* cpu = nullptr;  // who pays; null: a delay
    int cores = 1;
    bool device_with_cpu = false;  // a device of a node with a CPU host
    std::string node;              // the node's index, or the host's name
  };
  const End& end(simgrid::s4u::Host* host);

  const PlatformSpec& spec_;
  MessageOverhead overhead_;
  MessageNoise noise_;
  NetworkStack stack_;
  CopyModel copy_;
  std::uint64_t seed_;
  std::unordered_map<const simgrid::s4u::Host*, End> ends_;  // looked up, never iterated
};

// The collective fidelity runs no messages: an input error naming the first message-cost key given.
void check_message_costs_fidelity(const PlatformSpec& spec, bool collective_fidelity);

}  // namespace dts::sim
