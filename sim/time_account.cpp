// TimeAccount: per-actor accounts of simulated time, own and critical path (see the header).
#include "sim/time_account.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <unordered_map>

#include "core/errors.hpp"
#include "sim/sim_world.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

std::size_t at(TimeCategory c) { return static_cast<std::size_t>(c); }
double now() { return sg4::Engine::get_clock(); }

// What the categories need of a host, read from its properties once: a string lookup per transfer was a
// third of a 4096-worker gossip run, whose final tree allreduce classifies P x P pairs of hosts.
struct HostKind {
  int node = -1;  // dts_node, interned; -1: a node of its own (raw XML platforms have no dts_node)
  bool cpu = false;
};

const HostKind& kind(const sg4::Host* h) {
  static const auto id = sg4::Host::extension_create<HostKind>();
  if (const HostKind* k = h->extension(id)) return *k;
  static std::unordered_map<std::string, int> nodes;  // node name -> id, the same in every simulation
  auto* k = new HostKind;
  if (const char* node = h->get_property("dts_node"))
    k->node = nodes.try_emplace(node, static_cast<int>(nodes.size())).first->second;
  const char* role = h->get_property("dts_role");
  k->cpu = role != nullptr && std::strcmp(role, "cpu") == 0;
  const_cast<sg4::Host*>(h)->extension_set(id, k);  // a cache: the host owns it and deletes it
  return *k;
}

bool is_cpu(const sg4::Host* h) { return kind(h).cpu; }

bool same_node(const sg4::Host* a, const sg4::Host* b) {
  const int na = kind(a).node;
  return na >= 0 && na == kind(b).node;
}

}  // namespace

const char* to_string(TimeCategory c) {
  switch (c) {
    case TimeCategory::kGpuGpuParameter:
      return "gpu_gpu_parameter";
    case TimeCategory::kCpuGpuData:
      return "cpu_gpu_data";
    case TimeCategory::kCpuGpuParameter:
      return "cpu_gpu_parameter";
    case TimeCategory::kInterNodeParameter:
      return "inter_node_parameter";
    case TimeCategory::kForwardBackward:
      return "forward_backward";
    case TimeCategory::kGpuUpdate:
      return "gpu_update";
    case TimeCategory::kCpuUpdate:
      return "cpu_update";
    case TimeCategory::kIdle:
      return "idle";
  }
  return "?";
}

bool is_communication(TimeCategory c) { return c <= TimeCategory::kInterNodeParameter; }

double communication_s(const TimeVector& v) {
  double sum = 0;
  for (std::size_t i = 0; i < kTimeCategories; ++i) {
    if (is_communication(static_cast<TimeCategory>(i))) sum += v[i];
  }
  return sum;
}

double total_s(const TimeVector& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TimeCategory transfer_category(const sg4::Host* a, const sg4::Host* b) {
  if (a == b) return TimeCategory::kGpuGpuParameter;
  if (!same_node(a, b)) return TimeCategory::kInterNodeParameter;
  return is_cpu(a) || is_cpu(b) ? TimeCategory::kCpuGpuParameter : TimeCategory::kGpuGpuParameter;
}

TimeCategory TimeAccount::collective_category(const SimWorld& world, Rank caller, const Group& group) {
  const sg4::Host* self = world.host(caller);
  if (group.size() == 2) {  // a pair (a gossip step, partners changing every time): not worth caching
    return transfer_category(self, world.host(group.world_rank(group.world_rank(0) == caller ? 1 : 0)));
  }
  const auto [it, fresh] = collective_categories_.try_emplace({caller, group.hash()}, TimeCategory::kGpuGpuParameter);
  if (fresh) {  // enum order: GPU-GPU < CPU-GPU < inter-node, the widest
    for (const Rank r : group.members()) {
      it->second = std::max(it->second, transfer_category(self, world.host(r)));
      if (it->second == TimeCategory::kInterNodeParameter) break;
    }
  }
  return it->second;
}

TimeCategory update_category(const sg4::Host* host) {
  return is_cpu(host) ? TimeCategory::kCpuUpdate : TimeCategory::kGpuUpdate;
}

TimeAccount::State* TimeAccount::find(long pid) {
  const auto at = static_cast<std::size_t>(pid);
  return at < index_.size() && index_[at] > 0 ? &states_[index_[at] - 1] : nullptr;
}

TimeAccount::State* TimeAccount::self() { return find(sg4::this_actor::get_pid()); }

void TimeAccount::register_actor(State s) {
  s.times.start_s = s.since_s = now();
  s.pid = sg4::this_actor::get_pid();
  const auto at = static_cast<std::size_t>(s.pid);
  if (at >= index_.size()) index_.resize(std::max(at + 1, 2 * index_.size()), 0);
  index_[at] = states_.size() + 1;
  states_.push_back(std::move(s));
}

void TimeAccount::add_own(State& s, TimeCategory c, double begin_s, double end_s, SpanSink* sink) {
  if (end_s <= begin_s) return;
  s.times.own[at(c)] += end_s - begin_s;
  if (!s.times.main) s.intervals.push_back({begin_s, end_s, c});
  if (sink != nullptr) sink->span({s.times.rank, s.pid, s.times.main, c, begin_s, end_s});
}

void TimeAccount::flush(State& s, double now_s, SpanSink* sink) {
  if (!s.blocked && now_s > s.since_s) {
    add_own(s, s.current, s.since_s, now_s, sink);
    s.times.path[at(s.current)] += now_s - s.since_s;
  }
  if (!s.blocked) s.since_s = now_s;
}

TimeAccount::ActorScope::ActorScope(TimeAccount* account, Rank rank) : account_(account) {
  if (account_ == nullptr) return;
  State s;
  s.times.rank = rank;
  s.times.main = true;
  account_->register_actor(std::move(s));
}

TimeAccount::ActorScope::ActorScope(TimeAccount* account, SpawnedBy parent) : account_(account) {
  if (account_ == nullptr) return;
  State* p = account_->find(parent.parent_pid);
  if (p == nullptr) return;
  flush(*p, now(), account_->sink_);
  State s;
  s.times.rank = p->times.rank;
  s.times.path = p->times.path;  // the activity's path starts where its parent's is
  account_->register_actor(std::move(s));
}

TimeAccount::ActorScope::~ActorScope() {
  if (account_ == nullptr) return;
  State* s = account_->self();
  if (s == nullptr) return;
  s->blocked = false;  // a killed actor may end inside a wait
  flush(*s, now(), account_->sink_);
  s->times.end_s = now();
}

TimeAccount::Scope::Scope(TimeAccount* account, TimeCategory c) {
  State* s = account != nullptr ? account->self() : nullptr;
  if (s == nullptr) return;
  account_ = account;
  flush(*s, now(), account->sink_);
  before_ = s->current;
  s->current = c;
}

TimeAccount::Scope::~Scope() {
  if (account_ == nullptr) return;
  State* s = account_->self();
  if (s == nullptr) return;
  flush(*s, now(), account_->sink_);
  s->current = before_;
}

std::shared_ptr<FlowTrace> TimeAccount::trace_send(const sg4::Host* src, const sg4::Host* dst) {
  State* s = self();
  if (s == nullptr) return nullptr;
  flush(*s, now(), sink_);
  auto t = std::make_shared<FlowTrace>();
  t->category = transfer_category(src, dst);
  t->sink = sink_;
  t->from = s->times.rank;
  t->src = src;
  t->dst = dst;
  t->start_s = now();
  t->path = s->times.path;
  return t;
}

void TimeAccount::arrived(FlowTrace* trace) {
  if (trace == nullptr) return;
  trace->end_s = now();
  if (trace->sink != nullptr)
    trace->sink->message({trace->from, trace->src, trace->dst, trace->category, trace->start_s, trace->end_s});
}

void TimeAccount::wait_begin() {
  State* s = self();
  if (s == nullptr || s->blocked) return;
  flush(*s, now(), sink_);
  s->blocked = true;
  s->blocked_since_s = now();
}

void TimeAccount::wait_end(const FlowTrace* done) {
  State* s = self();
  if (s == nullptr || !s->blocked) return;
  const double t0 = s->blocked_since_s, t1 = now();
  s->blocked = false;
  s->since_s = t1;
  if (done == nullptr || done->end_s < 0) {
    add_own(*s, TimeCategory::kIdle, t0, t1, sink_);
    s->times.path[at(TimeCategory::kIdle)] += t1 - t0;
    return;
  }
  // Own: the wire time inside my wait is communication, the rest idle.
  const double a = std::clamp(done->start_s, t0, t1), b = std::clamp(done->end_s, t0, t1);
  add_own(*s, TimeCategory::kIdle, t0, a, sink_);
  add_own(*s, done->category, a, b, sink_);
  add_own(*s, TimeCategory::kIdle, b, t1, sink_);
  // Path: the message ended after I began waiting, so it is the later dependency: its sender's path.
  if (done->end_s > t0) {
    s->times.path = done->path;
    s->times.path[at(done->category)] += done->end_s - done->start_s;
    s->times.path[at(TimeCategory::kIdle)] += t1 - done->end_s;
  } else {
    s->times.path[at(TimeCategory::kIdle)] += t1 - t0;
  }
}

void TimeAccount::join_begin() { wait_begin(); }

void TimeAccount::join_end(long child_pid) {
  State* s = self();
  State* c = find(child_pid);
  if (s == nullptr || !s->blocked) return;
  if (c == nullptr || c->times.end_s < 0) return wait_end(nullptr);
  const double t0 = s->blocked_since_s, t1 = now();
  s->blocked = false;
  s->since_s = t1;
  // Own: what the activity did during my join; path: the activity's, if it ended after I began to wait.
  // In the timeline, the join's stretches are the activity's, and the gaps between them idle.
  double covered = 0, at_s = t0;
  for (const Interval& iv : c->intervals) {
    const double a = std::max(iv.begin_s, t0), b = std::min(iv.end_s, t1);
    if (b <= a) continue;
    s->times.own[at(iv.category)] += b - a;
    if (!s->times.main) s->intervals.push_back({a, b, iv.category});
    if (sink_ != nullptr) {
      if (a > at_s) sink_->span({s->times.rank, s->pid, s->times.main, TimeCategory::kIdle, at_s, a});
      sink_->span({s->times.rank, s->pid, s->times.main, iv.category, a, b});
      at_s = std::max(at_s, b);
    }
    covered += b - a;
  }
  s->times.own[at(TimeCategory::kIdle)] += std::max(0.0, (t1 - t0) - covered);
  if (sink_ != nullptr && t1 > at_s) sink_->span({s->times.rank, s->pid, s->times.main, TimeCategory::kIdle, at_s, t1});
  std::vector<Interval>().swap(c->intervals);  // joined once
  if (c->times.end_s > t0) {
    s->times.path = c->times.path;
    s->times.path[at(TimeCategory::kIdle)] += t1 - c->times.end_s;
  } else {
    s->times.path[at(TimeCategory::kIdle)] += t1 - t0;
  }
}

std::vector<ActorTimes> TimeAccount::actors(double now_s) const {
  std::vector<ActorTimes> out;
  for (State s : states_) {
    if (s.times.end_s < 0) {
      s.blocked = false;
      flush(s, now_s, nullptr);
      s.times.end_s = now_s;
    }
    out.push_back(s.times);
  }
  return out;
}

}  // namespace dts::sim
