// Plans run by run_plan (algorithms/collectives): numbered rounds and quorum stages, on every backend and, in
// the simulator, at both fidelities (sim_conformance_test.cpp).
#include "algorithms/collectives/collectives.hpp"
#include "tests/conformance/comm_conformance.hpp"

namespace dts::conformance {
namespace detail {
namespace {

constexpr Tag kToken = 98, kPlan = 31;

// Member 0 adds to its vector the first `quorum` of the others' to arrive, then sends the sum to every member:
// a parameter server's synchronous step with backup workers, as a plan.
class GatherQuorumPlan final : public CollectivePlan {
 public:
  GatherQuorumPlan(int P, std::size_t quorum, std::size_t n) : P_(P), quorum_(quorum), n_(n) {}
  const char* name() const override { return "gather_quorum"; }
  int size() const override { return P_; }
  int stages(int) const override { return 2; }
  PlanStage stage(int member, int s) const override {
    PlanStage st;
    const Chunk all{0, n_};
    if (member != 0) {
      if (s == 0) st.sends.push_back({.peer = 0, .chunk = all, .from_input = false});
      if (s == 1) st.recvs.push_back({.peer = 0, .chunk = all, .add = false});
      return st;
    }
    for (int m = 1; m < P_; ++m) {
      if (s == 0) st.recvs.push_back({.peer = m, .chunk = all, .add = true});
      if (s == 1) st.sends.push_back({.peer = m, .chunk = all, .from_input = false});
    }
    if (s == 0) st.quorum = quorum_;
    return st;
  }

 private:
  int P_;
  std::size_t quorum_, n_;
};

// Rank r's vector in a round: exact sums in floats.
std::vector<float> contribution(Rank r, Round round) {
  const auto x = static_cast<float>(100 * round + static_cast<Round>(r) + 1);
  return {x, -x};
}

nlohmann::json run_round(Comm& comm, Round round, std::size_t quorum) {
  std::vector<float> v = contribution(comm.rank(), round);
  const GatherQuorumPlan plan(kRanks, quorum, v.size());
  collectives::PlanOptions numbered;
  numbered.round = round;
  collectives::run_plan(comm, nullptr, Group::range(0, kRanks), plan, Slice(v), kPlan, numbered);
  return v;
}

// Round 1: rank 3 skips it (gives it up); rank 0 sums its own and ranks 1 and 2's (quorum 2). Round 2: rank 3
// comes 1 s late; rank 0 takes ranks 1 and 2 again, and rank 3's contribution arrives after rank 0 gave the
// round up. Round 3: rank 0 comes 2 s late and waits for all three; rank 3's late round-2 message is not among them.
Case plan_rounds_and_quorum() {
  return {"plan_rounds_and_quorum",
          "a plan's quorum stage takes the first k to arrive; numbered rounds pair the calls though a member skips one",
          [](Comm& comm, Node& node, nlohmann::json& f) {
            std::vector<float> t = {0};
            if (comm.rank() == 0) {  // everyone has started
              for (Rank r = 1; r < kRanks; ++r) comm.recv(r, kToken, std::span<float>(t));
              for (Rank r = 1; r < kRanks; ++r) comm.send(r, kToken, std::span<const float>(t));
            } else {
              comm.send(0, kToken, std::span<const float>(t));
              comm.recv(0, kToken, std::span<float>(t));
            }
            if (comm.rank() == 3) {
              comm.drop_stale(kPlan, 2);
            } else {
              f["r1"] = run_round(comm, 1, 2);
            }
            if (comm.rank() == 3) node.sleep_for(1.0);
            f["r2"] = run_round(comm, 2, 2);
            if (comm.rank() == 0) node.sleep_for(2.0);
            f["r3"] = run_round(comm, 3, 3);
          },
          [](nlohmann::json f) {
            Expect e;
            const auto sum = [](Round round, int ranks) {
              float x = 0;
              for (Rank r = 0; r < ranks; ++r) x += contribution(r, round)[0];
              return nlohmann::json({x, -x});
            };
            for (Rank r = 0; r < kRanks; ++r) {
              const std::string who = "rank " + std::to_string(r) + " ";
              const auto got = [&](const char* key) { return f[r][key]; };
              if (r != 3) e(got("r1") == sum(1, 3), who + "round 1 " + got("r1").dump());
              e(got("r2") == sum(2, 3), who + "round 2 (not rank 3's) " + got("r2").dump());
              e(got("r3") == sum(3, 4), who + "round 3 (all four) " + got("r3").dump());
            }
            return e.failure;
          }};
}

}  // namespace

std::vector<Case> plan_cases() { return {plan_rounds_and_quorum()}; }

}  // namespace detail
}  // namespace dts::conformance
