// Wires: host-to-host transfers through mailboxes with a permanent receiver.
#include "sim/wire.hpp"

#include <atomic>
#include <string>

#include "core/errors.hpp"
#include "sim/actor_stack.hpp"
#include "sim/link_windows.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

// The receivers only exist to be named: they block for good. Not by suspending themselves, as SimGrid
// suspends the comms of a suspended actor.
constexpr unsigned kReceiverStackKiB = 16;

void block_for_good() {
  const sg4::MutexPtr mutex = sg4::Mutex::create();
  const sg4::ConditionVariablePtr never = sg4::ConditionVariable::create();
  std::unique_lock<sg4::Mutex> lock(*mutex);
  never->wait(lock);
}

}  // namespace

sg4::ActorPtr Wires::receiver(sg4::Host* host) {
  auto it = receivers_.find(host);
  if (it != receivers_.end()) return it->second;
  sg4::ActorPtr actor = start_actor("wire-end", host, kReceiverStackKiB, block_for_good);
  actor->daemonize();
  return receivers_.emplace(host, actor).first->second;
}

sg4::Mailbox* Wires::take_box(sg4::Host* to) {
  std::vector<sg4::Mailbox*>& idle = idle_[to];
  if (idle.empty()) {
    // Names unique in the process: two worlds in one engine must not share a mailbox.
    static std::atomic<std::uint64_t> made{0};
    sg4::Mailbox* box = sg4::Mailbox::by_name("dts-wire-" + std::to_string(made++));
    box->set_receiver(receiver(to));  // for good: setting it is a simcall
    return box;
  }
  sg4::Mailbox* box = idle.back();
  idle.pop_back();
  return box;
}

namespace {
int token;  // put refuses a null payload; nothing reads it
}  // namespace

void Wires::carry(sg4::Host* from, sg4::Host* to, std::uint64_t bytes) {
  DTS_ASSERT(sg4::this_actor::get_host() == from && from != to, "a wire is carried from its own host to another");
  sg4::Mailbox* box = take_box(to);
  if (const std::vector<int>* crossed = windowed_links(from, to)) {
    windows_->carry(
        *crossed, bytes, [box](std::uint64_t left) { return box->put_async(&token, left); },
        [box] {  // the cancelled comm stays in the box until taken
          try {
            box->get<int>();
          } catch (const simgrid::Exception&) {
          }
        });
  } else {
    box->put(&token, bytes);
  }
  box->get<int>();  // the comm just completed, the only one in the box: frees it at no simulated time
  idle_[to].push_back(box);
}

void Wires::pull(sg4::Host* from, sg4::Host* to, std::uint64_t bytes) {
  const std::vector<int>* crossed = windowed_links(from, to);
  if (crossed == nullptr) {
    sg4::Comm::sendto(from, to, bytes);
    return;
  }
  windows_->carry(
      *crossed, bytes, [from, to](std::uint64_t left) { return sg4::Comm::sendto_async(from, to, left); },  // started
      [] {});
}

const std::vector<int>* Wires::windowed_links(sg4::Host* from, sg4::Host* to) {
  if (windows_ == nullptr) return nullptr;
  const std::vector<int>& crossed = windows_->crossed(from, to);
  return crossed.empty() ? nullptr : &crossed;
}

Wires::Transfer Wires::start(sg4::Host* from, sg4::Host* to, std::uint64_t bytes) {
  DTS_ASSERT(sg4::this_actor::get_host() == from && from != to, "a wire is carried from its own host to another");
  DTS_ASSERT(windowed_links(from, to) == nullptr, "a started flow crosses a link window");
  Transfer t;
  t.to = to;
  t.box = take_box(to);
  t.comm = t.box->put_async(&token, bytes);
  return t;
}

double Wires::finish(Transfer& t) {
  t.comm->wait();
  const double end = t.comm->get_finish_time();
  t.box->get<int>();  // as carry's
  idle_[t.to].push_back(t.box);
  t = {};
  return end;
}

}  // namespace dts::sim
