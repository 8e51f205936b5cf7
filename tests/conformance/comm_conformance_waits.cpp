// The wait log (algorithms/api/wait_log.hpp): a blocked wait is charged to the peer that ended it, on every
// backend, by Request::wait and Comm::wait_any; a timeout to no one.
#include <algorithm>

#include "algorithms/api/wait_log.hpp"
#include "tests/conformance/comm_conformance.hpp"

namespace dts::conformance {
namespace detail {
namespace {

constexpr Tag kToken = 99, kData = 22;
constexpr double kLateS = 0.2;  // how long a late peer sleeps before it sends

void token_to(Comm& comm, Rank dst) {
  std::vector<float> t = {0};
  comm.send(dst, kToken, std::span<const float>(t));
}
void token_from(Comm& comm, Rank src) {
  std::vector<float> t(1);
  comm.recv(src, kToken, std::span<float>(t));
}

// Rank 0 receives from rank 1, which sends kLateS after the start; then lets rank 3 go and waits on receives
// from ranks 2 and 3, of which rank 3 sends kLateS later and rank 2 only when told; the receive from rank 2
// then times out after 0.1 s, and completes once rank 2 is told.
Case wait_log() {
  return {"wait_log", "a blocked wait is charged to the peer whose message ended it; a timeout to no one",
          [](Comm& comm, Node& node, nlohmann::json& f) {
            const Rank me = comm.rank();
            std::vector<float> v = {static_cast<float>(me)};
            if (me == 1) {
              node.sleep_for(kLateS);
              comm.send(0, kData, std::span<const float>(v));
            } else if (me == 2 || me == 3) {
              token_from(comm, 0);
              if (me == 3) node.sleep_for(kLateS);
              comm.send(0, kData, std::span<const float>(v));
            } else {
              WaitLog log;
              comm.set_wait_log(&log);
              std::vector<float> a(1), b(1), c(1);
              comm.recv(1, kData, std::span<float>(a));
              token_to(comm, 3);
              std::vector<Request> rx;
              rx.push_back(comm.irecv(2, kData, std::span<float>(b)));
              rx.push_back(comm.irecv(3, kData, std::span<float>(c)));
              const Comm::Completion first = comm.wait_any(rx);
              f["first"] = first.index;
              f["timeout"] = to_string(rx[0].wait(0.1));
              token_to(comm, 2);
              rx[0].wait_ok();
              comm.set_wait_log(nullptr);
              const auto on = log.waited_on();
              double charged = 0;
              for (const auto& [peer, s] : on) {
                f["peers"].push_back(peer);
                charged += s;
              }
              // Each late peer's wait once (twice would be 2 kLateS), and the timeout beside them.
              auto about_late = [&](Rank p) {
                return on.count(p) == 1 && on.at(p) > 0.75 * kLateS && on.at(p) < 1.9 * kLateS;
              };
              f["on_1"] = about_late(1);
              f["on_3"] = about_late(3);
              f["timeout_uncharged"] = log.blocked_s() - charged >= 0.09;
            }
          },
          [](nlohmann::json f) {
            Expect e;
            const auto& r0 = f[0];
            e(r0["first"] == 1, "wait_any completed " + r0["first"].dump() + ", not rank 3's receive");
            e(r0["timeout"] == "timeout", "the receive from rank 2 did not time out");
            const auto& peers = r0["peers"];
            const bool known = std::all_of(peers.begin(), peers.end(), [](const auto& p) { return p >= 1 && p <= 3; });
            e(known, "waits charged to " + peers.dump() + ": only ranks 1-3 ended rank 0's waits");
            e(r0["on_1"] == true, "the wait on rank 1's late message is not charged to rank 1 (once)");
            e(r0["on_3"] == true, "wait_any's wait on rank 3's late message is not charged to rank 3 (once)");
            e(r0["timeout_uncharged"] == true, "the timed-out wait is missing from the blocked time");
            return e.failure;
          }};
}

}  // namespace

std::vector<Case> wait_cases() { return {wait_log()}; }

}  // namespace detail
}  // namespace dts::conformance
