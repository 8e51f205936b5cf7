// MessageCosts: who pays which host-side cost of a message, and the CPU executions that charge it.
#include "sim/message_costs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/rng.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {

void HostCharge::pay() const {
  if (seconds <= 0) return;
  if (on == nullptr) {
    sg4::this_actor::sleep_for(seconds);
    return;
  }
  start()->wait();
}

sg4::ExecPtr HostCharge::start() const {
  if (seconds <= 0 || on == nullptr) return nullptr;
  // One core: a SimGrid core where the host has several; where it has one standing for the whole chip (as
  // dtsim builds them), 1 / cores of it, the execution bounded to that rate so that it takes `seconds` alone
  // and leaves the rest of the chip to the compute beside it.
  const double core_flops = on->get_core_count() > 1 ? on->get_speed() : on->get_speed() / std::max(1, cores);
  sg4::ExecPtr exec = sg4::this_actor::exec_init(seconds * core_flops);
  exec->set_host(on);
  exec->set_bound(core_flops);
  exec->start();
  return exec;
}

void MessageCharge::alongside(const std::function<void()>& flow) const {
  const double t0 = sg4::Engine::get_clock();
  const sg4::ExecPtr s = sender_stack.start(), r = receiver_stack.start();
  flow();
  if (s) s->wait();
  if (r) r->wait();
  const double delay = std::max(sender_stack.on == nullptr ? sender_stack.seconds : 0.0,
                                receiver_stack.on == nullptr ? receiver_stack.seconds : 0.0);
  const double left = t0 + delay - sg4::Engine::get_clock();
  if (left > 0) sg4::this_actor::sleep_for(left);
}

MessageCosts::MessageCosts(const PlatformSpec& spec, std::uint64_t seed)
    : spec_(spec),
      overhead_(spec.message_overhead),
      noise_(spec.message_noise),
      stack_(spec.network_stack),
      copy_(spec.node ? spec.node->copy : CopyModel{}),
      seed_(seed) {}

const MessageCosts::End& MessageCosts::end(sg4::Host* host) {
  auto [it, fresh] = ends_.try_emplace(host);
  End& e = it->second;
  if (!fresh) return e;
  const char* node = host->get_property("dts_node");
  e.node = node != nullptr ? node : host->get_name();
  const char* role = host->get_property("dts_role");
  const bool device = role != nullptr && std::strcmp(role, "device") == 0;
  if (const char* cpu = host->get_property(kNodeCpuProperty)) {
    e.device_with_cpu = true;
    e.cpu = sg4::Host::by_name(cpu);
    e.cores = spec_.node->cpu->cores;
  } else if (sg4::Host* machine = machine_of(host)) {
    e.cpu = machine;  // one of its cores
  } else if (device && spec_.node && !spec_.node->cpu) {
    e.cpu = nullptr;  // a device of a self-hosted node: a delay
  } else {
    e.cpu = host;
    e.cores = device_of_host(spec_, host).cores;
  }
  return e;
}

MessageCharge MessageCosts::charge(Rank src, std::uint64_t index, sg4::Host* src_host, sg4::Host* dst_host,
                                   double bytes, bool blocking) {
  MessageCharge c;
  if (src_host == dst_host) return c;
  const End& s = end(src_host);
  const End& d = end(dst_host);
  double send_f = 1, recv_f = 1;
  if (noise_.given && noise_.sigma > 0) {
    Rng rng(seed_, static_cast<std::uint64_t>(src), fnv1a_step(stream_id("message_noise"), index));
    const double shift = noise_.sigma * noise_.sigma / 2;  // E[exp(sigma z)] = exp(sigma^2 / 2)
    send_f = std::exp(noise_.sigma * rng.normal() - shift);
    recv_f = std::exp(noise_.sigma * rng.normal() - shift);
  }
  if (s.node == d.node && (s.device_with_cpu || d.device_with_cpu)) {  // a copy inside the node
    const End& dev = s.device_with_cpu ? s : d;
    const double t = s.device_with_cpu && d.device_with_cpu ? copy_.call_latency_s : copy_.seconds(bytes);
    c.sender = {dev.cpu, dev.cores, t * send_f};
    return c;
  }
  double send_s = overhead_s(blocking ? overhead_.send : overhead_.isend, bytes);
  double recv_s = overhead_s(overhead_.recv, bytes);
  if (s.device_with_cpu) send_s += copy_.seconds(bytes);  // staged out of the device through host memory
  if (d.device_with_cpu) recv_s += copy_.seconds(bytes);
  c.sender = {s.cpu, s.cores, send_s * send_f};
  c.receiver = {d.cpu, d.cores, recv_s * recv_f};
  if (stack_.given) {
    c.sender_stack = {s.cpu, s.cores, stack_.send_s_per_byte * bytes * send_f};
    c.receiver_stack = {d.cpu, d.cores, stack_.recv_s_per_byte * bytes * recv_f};
    c.stack = c.sender_stack.seconds > 0 || c.receiver_stack.seconds > 0;
  }
  return c;
}

void check_message_costs_fidelity(const PlatformSpec& spec, bool collective_fidelity) {
  if (!collective_fidelity) return;
  const char* key = spec.message_overhead.given          ? "message_overhead"
                    : spec.network_stack.given           ? "network_stack"
                    : spec.message_noise.given           ? "message_noise"
                    : spec.node && spec.node->copy.given ? "node/copy"
                                                         : nullptr;
  if (key != nullptr) {
    throw ConfigError(spec.origin + "/" + key,
                      "host-side message costs need run.fidelity \"message\": the collective fidelity runs no "
                      "messages to charge them to");
  }
}

}  // namespace dts::sim
