// Rounds in the envelope (SendOptions::round, RecvOptions::round, Comm::drop_stale) and wait_any's timeout.
#include "tests/conformance/comm_conformance.hpp"

namespace dts::conformance {
namespace detail {
namespace {

constexpr Tag kToken = 99, kData = 21;

void token_to(Comm& comm, Rank dst) {
  std::vector<float> t = {0};
  comm.send(dst, kToken, std::span<const float>(t));
}
void token_from(Comm& comm, Rank src) {
  std::vector<float> t(1);
  comm.recv(src, kToken, std::span<float>(t));
}
void send_round(Comm& comm, Rank dst, Round round, float value) {
  comm.send(dst, kData, std::span<const float>(&value, 1),
            {.modeled_bytes = std::nullopt, .borrow = false, .round = round});
}

// Rank 0 sends rounds 2, 1, 0 of one tag; rank 1's receives of rounds 0 and 1 take theirs, whatever the
// order. Rank 1 then gives up the rounds below 3: round 2, queued, is dropped, and so is a late round-2
// message that arrives afterwards; round 3 still matches.
Case rounds() {
  return {"rounds", "a message matches only a receive of its round; drop_stale discards older rounds, late ones too",
          [](Comm& comm, Node&, nlohmann::json& f) {
            if (comm.rank() == 0) {
              token_from(comm, 1);
              for (Round r : {2u, 1u, 0u}) send_round(comm, 1, r, static_cast<float>(r));
              token_to(comm, 1);
              token_from(comm, 1);
              send_round(comm, 1, 2, 22);  // late: round 2 was given up
              send_round(comm, 1, 3, 3);
              token_to(comm, 1);
            } else if (comm.rank() == 1) {
              float r0 = -1, r1 = -1, late = -1, r3 = -1;
              Request a = comm.irecv(0, kData, std::span<float>(&r0, 1), {.add = false, .round = 0});
              Request b = comm.irecv(0, kData, std::span<float>(&r1, 1), {.add = false, .round = 1});
              token_to(comm, 0);
              a.wait_ok();
              b.wait_ok();
              f["matched"] = {r0, r1};
              token_from(comm, 0);  // round 2 is here, unreceived (send order)
              comm.drop_stale(kData, 3);
              token_to(comm, 0);
              token_from(comm, 0);  // the late round 2 and round 3 are here
              Request stale = comm.irecv(0, kData, std::span<float>(&late, 1), {.add = false, .round = 2});
              f["stale"] = to_string(stale.wait(0.5));
              stale.cancel();
              comm.irecv(0, kData, std::span<float>(&r3, 1), {.add = false, .round = 3}).wait_ok();
              f["round3"] = r3;
              f["late"] = late;
            }
          },
          [](nlohmann::json f) {
            Expect e;
            const auto& r1 = f[1];
            e(r1["matched"] == nlohmann::json({0.0, 1.0}), "rounds 0 and 1 " + r1["matched"].dump());
            e(r1["stale"] == "timeout" && r1["late"] == -1, "a stale round matched: " + r1.dump());
            e(r1["round3"] == 3, "round 3 " + r1.dump());
            return e.failure;
          }};
}

// wait_any with a timeout and nothing to complete returns kTimeout and leaves every request pending.
Case wait_any_timeout() {
  return {"wait_any_timeout", "wait_any(timeout) returns kTimeout at the deadline, the requests still pending",
          [](Comm& comm, Node&, nlohmann::json& f) {
            if (comm.rank() == 0) {
              token_from(comm, 1);
              float x = 7;
              comm.send(1, kData, std::span<const float>(&x, 1));
            } else if (comm.rank() == 1) {
              float v = -1;
              std::vector<Request> reqs;
              reqs.push_back(comm.irecv(0, kData, std::span<float>(&v, 1)));
              const double t0 = comm.now_s();
              const Comm::Completion c = comm.wait_any(reqs, 0.2);
              f["timeout"] = {c.index, to_string(c.status), reqs[0].valid()};
              f["waited_enough"] = comm.now_s() - t0 >= 0.2 - 1e-9;
              token_to(comm, 0);
              const Comm::Completion d = comm.wait_any(reqs, 60);
              f["then"] = {d.index, to_string(d.status), v};
            }
          },
          [](nlohmann::json f) {
            Expect e;
            const auto& r1 = f[1];
            e(r1["timeout"] == nlohmann::json({1, "timeout", true}), "timeout " + r1["timeout"].dump());
            e(r1["waited_enough"] == true, "returned before the deadline");
            e(r1["then"] == nlohmann::json({0, "ok", 7.0}), "then " + r1["then"].dump());
            return e.failure;
          }};
}

}  // namespace

std::vector<Case> round_cases() { return {rounds(), wait_any_timeout()}; }

}  // namespace detail
}  // namespace dts::conformance
