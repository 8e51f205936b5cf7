// Where simulated time goes (papers/easgd_hpc.md §11, the time breakdown): every actor of a rank (its main
// actor and the activities it spawns) accumulates its simulated time by category, recorded by the sim/ code
// that blocks it: compute (SimCompute), messages and waits on them (SimWorld, SimComm), the activities a
// rank spawns and joins (SimNode), flows of the collective fidelity (CollectiveSim). The simulation owns
// one TimeAccount (run_simulation) and hands it to those parts; each reaches it through what it holds (a
// null account: nothing is recorded).
// A transfer is classified by its endpoints' hosts (properties dts_role, dts_node set by build_platform).
// Two accounts per actor:
//   own   what the actor itself was blocked in; a wait counts as communication only while the awaited
//         message was on the wire, the rest is idle. own sums to the actor's elapsed time.
//   path  the critical path that ends at the actor's present (overlapped time goes to the visible part):
//         a wait that a message ended continues the path of its sender at the send, plus the wire time; a
//         join continues the child's path. Its sum is the present time.
// The run's breakdown is the path of the rank that ends last. Nothing here reads the host's clock.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/group.hpp"

namespace dts::sim {

enum class TimeCategory : std::uint8_t {
  kGpuGpuParameter,     // parameters between two devices of one node (PCIe switch, NVLink, KNL chip)
  kCpuGpuData,          // minibatch copy from host memory to the device
  kCpuGpuParameter,     // parameters between a node's CPU and one of its devices
  kInterNodeParameter,  // parameters between nodes (the cluster network)
  kForwardBackward,
  kGpuUpdate,  // update rules on a device
  kCpuUpdate,  // update rules on a CPU host
  kIdle,       // waiting for a peer, a lock, a join: nothing on the wire for me
};
inline constexpr std::size_t kTimeCategories = 8;
using TimeVector = std::array<double, kTimeCategories>;

const char* to_string(TimeCategory c);  // snake_case, the summary.json key
bool is_communication(TimeCategory c);
double communication_s(const TimeVector& v);
double total_s(const TimeVector& v);

// Parameter traffic between two hosts; same host: kGpuGpuParameter (it costs nothing anyway).
TimeCategory transfer_category(const simgrid::s4u::Host* a, const simgrid::s4u::Host* b);
// An update on `host`: kCpuUpdate on a CPU host, kGpuUpdate otherwise.
TimeCategory update_category(const simgrid::s4u::Host* host);
class SimWorld;

// One stretch of an actor's own time in one category, as the account records it (a timeline's span).
struct Span {
  Rank rank = -1;
  long actor = -1;    // SimGrid pid
  bool main = false;  // the rank's own actor
  TimeCategory category = TimeCategory::kIdle;
  double begin_s = 0, end_s = 0;
};
// A message on the wire: its sender's rank, the hosts, its category and its times.
struct Message {
  Rank from = -1;
  const simgrid::s4u::Host* src = nullptr;
  const simgrid::s4u::Host* dst = nullptr;
  TimeCategory category = TimeCategory::kInterNodeParameter;
  double start_s = 0, end_s = 0;
};
// Where a timeline (experiments' run.trace) receives them, in simulation order.
struct SpanSink {
  virtual ~SpanSink() = default;
  virtual void span(const Span& s) = 0;
  virtual void message(const Message& m) = 0;
  // Link `link` carried `share` of its bandwidth from `begin_s` until its next call (sim/link_load.hpp).
  virtual void link_load(const std::string& /*link*/, double /*begin_s*/, double /*share*/) {}
};

// One message in flight: the sender's path when it was sent, and its wire time.
struct FlowTrace {
  TimeCategory category = TimeCategory::kInterNodeParameter;
  SpanSink* sink = nullptr;  // told when the message arrives; null: no timeline
  Rank from = -1;
  const simgrid::s4u::Host* src = nullptr;
  const simgrid::s4u::Host* dst = nullptr;
  double start_s = 0;
  double end_s = -1;  // < 0 while on the wire
  TimeVector path{};
};

struct ActorTimes {
  Rank rank = -1;
  bool main = false;  // the rank's own actor (not a spawned activity)
  double start_s = 0, end_s = -1;
  TimeVector own{}, path{};
};

class TimeAccount {
 public:
  TimeAccount() = default;
  TimeAccount(const TimeAccount&) = delete;
  TimeAccount& operator=(const TimeAccount&) = delete;
  // Every own-time stretch and every message from now on also goes to `sink` (null: none).
  void set_sink(SpanSink* sink) { sink_ = sink; }

  // Registers the calling actor for its lifetime in `account` (null: none): a rank's main actor, or an
  // activity spawned by the (registered) actor `parent_pid`, which inherits its rank and path. Unregistered
  // actors are ignored.
  struct SpawnedBy {
    long parent_pid = -1;
  };
  class ActorScope {
   public:
    ActorScope(TimeAccount* account, Rank rank);
    ActorScope(TimeAccount* account, SpawnedBy parent);
    ~ActorScope();
    ActorScope(const ActorScope&) = delete;
    ActorScope& operator=(const ActorScope&) = delete;

   private:
    TimeAccount* account_;
  };
  // The calling actor is in category `c` until the scope ends (then back to what it was); nothing if
  // `account` is null.
  class Scope {
   public:
    Scope(TimeAccount* account, TimeCategory c);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    TimeAccount* account_ = nullptr;  // null: off (no account, or an unregistered actor)
    TimeCategory before_ = TimeCategory::kIdle;
  };

  // A message sent by the calling actor from `src` to `dst`; null when the actor is not registered.
  std::shared_ptr<FlowTrace> trace_send(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst);
  static void arrived(FlowTrace* trace);  // null: not traced
  // The calling actor blocks on an operation; `done` is the trace of the message that completed it (or null).
  // Nested begins (wait_any, then the completed request's own wait) count from the outermost.
  void wait_begin();
  void wait_end(const FlowTrace* done);
  // The calling actor joins a spawned activity.
  void join_begin();
  void join_end(long child_pid);

  // A collective run as aggregated flows (collective fidelity): the widest transfer between the caller's
  // host and the other members' (inter-node, then CPU-GPU, then GPU-GPU). Cached per caller and group.
  TimeCategory collective_category(const SimWorld& world, Rank caller, const Group& group);

  // Every registered actor, in registration order (deterministic), flushed to `now_s` if still running.
  std::vector<ActorTimes> actors(double now_s) const;

 private:
  struct Interval {  // kept for spawned activities only, so that a join can see what they did in its window
    double begin_s, end_s;
    TimeCategory category;
  };
  struct State {
    ActorTimes times;
    long pid = -1;
    TimeCategory current = TimeCategory::kIdle;
    double since_s = 0;
    bool blocked = false;  // in a wait or a join: resolved when it ends
    double blocked_since_s = 0;
    std::vector<Interval> intervals;
  };
  State* self();
  State* find(long pid);
  // `sink`: where the stretches go (null: nowhere).
  static void flush(State& s, double now_s, SpanSink* sink);
  static void add_own(State& s, TimeCategory c, double begin_s, double end_s, SpanSink* sink);
  void register_actor(State s);

  std::vector<std::size_t> index_;  // by SimGrid pid (dense, from 0): 1 + the position in states_, or 0
  std::map<std::pair<Rank, std::uint64_t>, TimeCategory> collective_categories_;  // (caller, members' hash)
  std::deque<State> states_;                                                      // stable addresses
  SpanSink* sink_ = nullptr;
};

}  // namespace dts::sim
