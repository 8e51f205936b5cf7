// LineRounds: a round's shared state, its members' flows (carried by couriers) and the waits on its quorums.
#include "sim/line_round_sim.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

#include "sim/time_account.hpp"

namespace dts::sim {

struct LineRounds::Instance {
  std::vector<Rank> ranks;
  NicShares* nics = nullptr;  // run.line_round_timing nic
  std::vector<std::uint64_t> block_bytes;
  std::vector<std::size_t> block_chunks;
  std::size_t need_reduce = 1, need_complete = 1, groups = 1;
  int joined = 0;
  // Per member: its scatter groups delivered, its block's groups reduced, and those delivered; whether a courier
  // is carrying its reduced groups.
  std::vector<std::size_t> scattered, reduced, delivered;
  std::vector<char> carrying;
  std::vector<std::size_t> scattered_past;  // per group g: members whose scatter group g is delivered
  std::vector<std::size_t> held_other;      // per member: chunks of the other members' delivered reduced groups

  int size() const { return static_cast<int>(ranks.size()); }
  static std::size_t idx(int m) { return static_cast<std::size_t>(m); }
  std::size_t chunks(int b, std::size_t g) const {  // of member b's block in group g
    const std::size_t c = block_chunks[idx(b)];
    return LineRoundPart::group_begin(c, groups, g + 1) - LineRoundPart::group_begin(c, groups, g);
  }
  std::uint64_t bytes(int b, std::size_t g) const {
    const std::size_t c = block_chunks[idx(b)];
    return c == 0 ? 0 : block_bytes[idx(b)] * chunks(b, g) / c;
  }
  std::size_t contributions(int m, std::size_t g) const {
    return 1 + scattered_past[g] - (scattered[idx(m)] > g ? 1 : 0);
  }
  std::size_t held(int m) const {
    return held_other[idx(m)] + LineRoundPart::group_begin(block_chunks[idx(m)], groups, reduced[idx(m)]);
  }

  // Member k's scatter group g is in: wake the members whose group g now has its quorum (contributions(m, g)
  // is scattered_past[g] or one more, so only around the quorum is anyone's crossed).
  void scatter_arrived(SimWorld& world, int k, std::size_t g) {
    ++scattered[idx(k)];
    const std::size_t past = ++scattered_past[g];
    if (past + 1 < need_reduce || past > need_reduce) return;
    for (int m = 0; m < size(); ++m) {
      if (m != k && contributions(m, g) == need_reduce) world.wake(ranks[idx(m)]);
    }
  }
  // Member b's reduced group g is in: wake the members that now hold enough to complete.
  void reduced_arrived(SimWorld& world, int b, std::size_t g) {
    ++delivered[idx(b)];
    for (int m = 0; m < size(); ++m) {
      if (m == b) continue;
      const std::size_t before = held(m);
      held_other[idx(m)] += chunks(b, g);
      if (before < need_complete && held(m) >= need_complete) world.wake(ranks[idx(m)]);
    }
    world.wake(ranks[idx(b)]);
  }
};

LineRounds::LineRounds(SimWorld& world, LineRoundTiming timing, const RouteTimes& routes)
    : world_(world), timing_(timing) {
  if (timing.nic) nics_ = std::make_unique<NicShares>(routes);
}

LineRounds::~LineRounds() = default;

namespace {

// Completes once `ready()` holds; waits re-check it whenever the rank is woken (SimWorld::wake).
class Ready final : public detail::RequestImpl {
 public:
  Ready(SimWorld& world, Rank rank, std::function<bool()> ready)
      : world_(world), rank_(rank), ready_(std::move(ready)) {}
  bool test() override { return cancelled_ || ready_(); }
  // The wait counts as idle in the time account: no message's trace ends it (the flows are not traced).
  Status wait(double timeout_s) override {
    if (cancelled_) return Status::kCancelled;
    TimeAccount* account = world_.time_account();
    if (account != nullptr) account->wait_begin();
    const bool done = world_.wait_until(rank_, ready_, timeout_s);
    if (account != nullptr) account->wait_end(nullptr);
    return done ? Status::kOk : Status::kTimeout;
  }
  Rank source() const override { return -1; }
  void cancel() override { cancelled_ = true; }

 private:
  SimWorld& world_;
  Rank rank_;
  std::function<bool()> ready_;
  bool cancelled_ = false;
};

class Part final : public LineRoundPart {
  using Instance = LineRounds::Instance;

 public:
  Part(SimWorld& world, std::shared_ptr<Instance> inst, int me)
      : world_(world), inst_(std::move(inst)), me_(me), self_(inst_->ranks[Instance::idx(me)]) {}

  std::size_t groups() const override { return inst_->groups; }
  Request scatter() override {
    std::vector<std::uint64_t> bytes(inst_->groups, 0);
    for (int k = 0; k < inst_->size(); ++k) {
      if (k == me_) continue;
      const auto kk = Instance::idx(k);
      world_.account(self_, inst_->ranks[kk], inst_->block_bytes[kk], inst_->block_chunks[kk]);
      for (std::size_t g = 0; g < inst_->groups; ++g) bytes[g] += inst_->bytes(k, g);
    }
    // The couriers hold the round, not this part, which its member may destroy once they are done.
    world_.couriers().run(world_.host(self_), [&world = world_, inst = inst_, me = me_, bytes = std::move(bytes)] {
      for (std::size_t g = 0; g < bytes.size(); ++g) {
        carry(world, *inst, me, bytes[g]);
        inst->scatter_arrived(world, me, g);
      }
      world.wake(inst->ranks[Instance::idx(me)]);
    });
    return ready([inst = inst_, me = me_] { return inst->scattered[Instance::idx(me)] == inst->groups; });
  }
  Request reduce_due(std::size_t g) override {
    return ready([inst = inst_, me = me_, g] { return inst->contributions(me, g) >= inst->need_reduce; });
  }
  std::size_t contributions(std::size_t g) const override { return inst_->contributions(me_, g); }
  void send_reduced(std::size_t g) override {
    const auto mine = Instance::idx(me_);
    DTS_ASSERT(g == inst_->reduced[mine], "line round: groups reduced out of order");
    if (g == 0) {
      for (int k = 0; k < inst_->size(); ++k) {
        if (k != me_)
          world_.account(self_, inst_->ranks[Instance::idx(k)], inst_->block_bytes[mine], inst_->block_chunks[mine]);
      }
    }
    ++inst_->reduced[mine];
    if (inst_->carrying[mine]) return;  // the courier at work takes it next
    inst_->carrying[mine] = 1;
    world_.couriers().run(world_.host(self_), [&world = world_, inst = inst_, me = me_, mine] {
      while (inst->delivered[mine] < inst->reduced[mine]) {
        const std::size_t next = inst->delivered[mine];
        carry(world, *inst, me, inst->bytes(me, next) * static_cast<std::uint64_t>(inst->size() - 1));
        inst->reduced_arrived(world, me, next);
      }
      inst->carrying[mine] = 0;
    });
  }
  Request reduced_delivered() override {
    return ready([inst = inst_, me = me_] { return inst->delivered[Instance::idx(me)] == inst->groups; });
  }
  Request complete_due() override {
    return ready([inst = inst_, me = me_] { return inst->held(me) >= inst->need_complete; });
  }
  std::size_t held_chunks() const override { return inst_->held(me_); }

 private:
  Request ready(std::function<bool()> pred) { return Request(std::make_unique<Ready>(world_, self_, std::move(pred))); }
  // One flow of `bytes` from member `me` to its line neighbour, on the calling courier.
  static void carry(SimWorld& world, const Instance& inst, int me, std::uint64_t bytes) {
    simgrid::s4u::Host* from = world.host(inst.ranks[Instance::idx(me)]);
    simgrid::s4u::Host* to = world.host(inst.ranks[Instance::idx((me + 1) % inst.size())]);
    if (from == to) return;
    if (inst.nics != nullptr) {
      inst.nics->carry(from, to, static_cast<double>(bytes));
    } else {
      world.wires().carry(from, to, bytes);
    }
  }

  SimWorld& world_;
  std::shared_ptr<Instance> inst_;
  int me_;
  Rank self_;
};

}  // namespace

std::unique_ptr<LineRoundPart> LineRounds::join(const LineRoundSpec& spec, Rank self) {
  const int p = spec.line->size();
  const std::size_t chunks = std::accumulate(spec.block_chunks.begin(), spec.block_chunks.end(), std::size_t{0});
  if (p < 2 || 2 * static_cast<std::uint64_t>(p - 1) * chunks <= timing_.message_budget) return nullptr;
  DTS_ASSERT(spec.line->world_rank(spec.index) == self, "line round: a member that is not itself");
  const Key key{spec.line->hash(), spec.tag, spec.round, p};
  std::shared_ptr<Instance>& slot = open_[key];
  if (slot == nullptr) {
    slot = std::make_shared<Instance>();
    Instance& in = *slot;
    in.ranks.assign(spec.line->members().begin(), spec.line->members().end());
    in.block_bytes = spec.block_bytes;
    in.block_chunks = spec.block_chunks;
    in.need_reduce = spec.need_reduce;
    in.need_complete = spec.need_complete;
    in.nics = nics_.get();
    std::size_t fewest = 0;  // chunks of the smallest block that has any
    for (const std::size_t c : spec.block_chunks) fewest = c == 0 ? fewest : fewest == 0 ? c : std::min(fewest, c);
    in.groups = std::clamp<std::size_t>(timing_.groups, 1, std::max<std::size_t>(fewest, 1));
    const auto n = static_cast<std::size_t>(p);
    in.scattered.assign(n, 0);
    in.reduced.assign(n, 0);
    in.delivered.assign(n, 0);
    in.carrying.assign(n, 0);
    in.scattered_past.assign(in.groups, 0);
    in.held_other.assign(n, 0);
  }
  std::shared_ptr<Instance> inst = slot;
  if (++inst->joined == p) open_.erase(key);  // every member holds it from here on
  return std::make_unique<Part>(world_, std::move(inst), spec.index);
}

}  // namespace dts::sim
