// start_actor: init, set_stacksize and start run in maestro within one simcall from the calling actor.
#include "sim/actor_stack.hpp"

#include <simgrid/simix.hpp>

namespace sg4 = simgrid::s4u;

namespace dts::sim {

sg4::ActorPtr start_actor(const std::string& name, sg4::Host* host, unsigned stack_kib, std::function<void()> code) {
  return simgrid::kernel::actor::simcall_answered(
      [&] { return sg4::Actor::init(name, host)->set_stacksize(stack_kib)->start(std::move(code)); });
}

}  // namespace dts::sim
