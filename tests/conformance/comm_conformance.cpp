// Matching cases of the conformance suite: send order per (source, tag), receives from a set of sources with a
// competing sender outside the set, wait_any and post-order matching, timeouts and cancellation. Ranks order
// their sends with tokens (small messages) rather than sleeps, so every backend sees the same interleaving.
#include "tests/conformance/comm_conformance.hpp"

#include <algorithm>

namespace dts::conformance {
namespace detail {
namespace {

constexpr Tag kToken = 99;

void token_to(Comm& comm, Rank dst) {
  std::vector<float> t = {0};
  comm.send(dst, kToken, std::span<const float>(t));
}
void token_from(Comm& comm, Rank src) {
  std::vector<float> t(1);
  comm.recv(src, kToken, std::span<float>(t));
}

// Rank 0 sends 12 messages with tag 5 to rank 1, 1 MB and 1 float alternating (the small one may overtake the
// big one on the wire), then one with tag 6. Rank 1 posts 6 receives before, then takes tag 6 first (the rest
// of the tag-5 messages are unexpected by then), posts 6 more, and waits for them last to first.
Case ordering() {
  auto size = [](int k) -> std::size_t { return k % 2 == 0 ? 262'144 : 1; };
  return {"ordering", "messages of one (source, tag) match in send order; other tags do not wait for them",
          [size](Comm& comm, Node&, nlohmann::json& f) {
            if (comm.rank() == 0) {
              token_from(comm, 1);
              std::vector<Request> tx;
              for (int k = 0; k < 12; ++k) {
                std::vector<float> v(size(k), static_cast<float>(k));
                tx.push_back(comm.isend(1, 5, std::span<const float>(v)));  // v dies at once: snapshotted
              }
              std::vector<float> marker = {6};
              comm.send(1, 6, std::span<const float>(marker));
              for (auto& r : tx) r.wait_ok();
            } else if (comm.rank() == 1) {
              std::vector<std::vector<float>> bufs;
              for (int k = 0; k < 12; ++k) bufs.emplace_back(size(k), -1.0f);
              std::vector<Request> rx;
              for (int k = 0; k < 6; ++k) rx.push_back(comm.irecv(0, 5, std::span<float>(bufs[k])));
              token_to(comm, 0);
              std::vector<float> marker(1);
              comm.recv(0, 6, std::span<float>(marker));
              for (int k = 6; k < 12; ++k) rx.push_back(comm.irecv(0, 5, std::span<float>(bufs[k])));
              for (int k = 11; k >= 0; --k) rx[static_cast<std::size_t>(k)].wait_ok();
              f["marker"] = marker[0];
              for (const auto& b : bufs) {
                const bool uniform = std::all_of(b.begin(), b.end(), [&](float x) { return x == b[0]; });
                f["got"].push_back(uniform ? b[0] : -2.0f);
              }
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[1]["marker"] == 6, "the tag-6 message");
            for (int k = 0; k < 12; ++k) e(f[1]["got"][k] == k, "message " + std::to_string(k) + " out of order");
            return e.failure;
          }};
}

// Rank 3, outside the set, sends tag 9 to rank 0 first; rank 0 then receives twice from {1, 2} with tag 9,
// and finally takes rank 3's message with a plain receive: it must still be there, untouched.
Case any_source_outsider() {
  return {"any_source_outsider", "irecv_any takes only members of its set, even when an outsider uses the tag",
          [](Comm& comm, Node&, nlohmann::json& f) {
            const Rank me = comm.rank();
            std::vector<float> v = {static_cast<float>(100 * me)};
            if (me == 3) {
              comm.send(0, 9, std::span<const float>(v));
              comm.send(0, 10, std::span<const float>(v));
            } else if (me == 1 || me == 2) {
              token_from(comm, 0);
              comm.send(0, 9, std::span<const float>(v));
            } else {
              std::vector<float> a(1), b(1), c(1);
              comm.recv(3, 10, std::span<float>(c));  // rank 3's tag-9 message is here by now (send order)
              const std::vector<Rank> set = {1, 2};
              Request ra = comm.irecv_any(set, 9, std::span<float>(a));
              Request rb = comm.irecv_any(set, 9, std::span<float>(b));
              token_to(comm, 1);
              token_to(comm, 2);
              ra.wait_ok();
              rb.wait_ok();
              f["sources"] = {ra.source(), rb.source()};
              f["values"] = {a[0], b[0]};
              // Bounded: an implementation that gave this message to the any-receive would wait forever.
              f["outsider_status"] = to_string(comm.irecv(3, 9, std::span<float>(c)).wait(10.0));
              f["outsider"] = c[0];
            }
          },
          [](nlohmann::json f) {
            Expect e;
            const auto& r0 = f[0];
            const int s0 = r0["sources"][0].get<int>(), s1 = r0["sources"][1].get<int>();
            e(std::min(s0, s1) == 1 && std::max(s0, s1) == 2, "sources " + r0["sources"].dump());
            e(r0["values"][0] == 100 * s0 && r0["values"][1] == 100 * s1, "values " + r0["values"].dump());
            e(r0["outsider_status"] == "ok" && r0["outsider"] == 300, "the outsider's message was taken or changed");
            return e.failure;
          }};
}

// Rank 0 waits on [irecv_any({1,2,3}, 9), irecv(2, 9)] and lets rank 1, then rank 2, send. Then, with tag 13,
// rank 2 sends twice: a message goes to the earliest posted receive that matches it (the any-receive).
Case wait_any_and_post_order() {
  return {"wait_any_post_order", "wait_any returns the first completion and consumes it; earliest posted receive wins",
          [](Comm& comm, Node&, nlohmann::json& f) {
            const Rank me = comm.rank();
            if (me == 1 || me == 2) {
              std::vector<float> v = {static_cast<float>(me)};
              token_from(comm, 0);
              comm.send(0, 9, std::span<const float>(v));
              if (me == 2) {
                for (float x : {20.0f, 21.0f}) {
                  token_from(comm, 0);
                  comm.send(0, 13, std::span<const float>(&x, 1));
                }
              }
            } else if (me == 0) {
              std::vector<float> a(1), b(1);
              const std::vector<Rank> set = {1, 2, 3};
              std::vector<Request> reqs;
              reqs.push_back(comm.irecv_any(set, 9, std::span<float>(a)));
              reqs.push_back(comm.irecv(2, 9, std::span<float>(b)));
              token_to(comm, 1);
              auto c = comm.wait_any(reqs);
              f["first"] = {c.index, c.source, to_string(c.status), reqs[c.index].valid(), a[0]};
              token_to(comm, 2);
              c = comm.wait_any(reqs);
              f["second"] = {c.index, c.source, to_string(c.status), b[0]};
              reqs.clear();
              reqs.push_back(comm.irecv_any(set, 13, std::span<float>(a)));
              reqs.push_back(comm.irecv(2, 13, std::span<float>(b)));
              token_to(comm, 2);
              c = comm.wait_any(reqs);
              f["post_order"].push_back({c.index, c.source, a[0]});
              token_to(comm, 2);
              c = comm.wait_any(reqs);
              f["post_order"].push_back({c.index, c.source, b[0]});
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[0]["first"] == nlohmann::json({0, 1, "ok", false, 1.0}), "first " + f[0]["first"].dump());
            e(f[0]["second"] == nlohmann::json({1, 2, "ok", 2.0}), "second " + f[0]["second"].dump());
            e(f[0]["post_order"] == nlohmann::json({{0, 2, 20.0}, {1, 2, 21.0}}),
              "post order " + f[0]["post_order"].dump());
            return e.failure;
          }};
}

// Rank 1 waits 0.2 s for a message nobody has sent yet, cancels that receive and others (explicitly and by
// dropping the handle), then lets rank 0 send: every message goes to a live receive.
Case timeouts_and_cancel() {
  return {"timeout_cancel", "wait(timeout) returns kTimeout no earlier than the deadline; cancel frees the message",
          [](Comm& comm, Node&, nlohmann::json& f) {
            std::vector<float> a(1), b(1);
            if (comm.rank() == 0) {
              token_from(comm, 1);
              for (float x : {42.0f, 8.0f}) comm.send(1, x == 42.0f ? 2 : 8, std::span<const float>(&x, 1));
              float five = 5;
              Request tx = comm.isend(1, 15, std::span<const float>(&five, 1));
              tx.cancel();  // a send cannot be recalled
              f["send_after_cancel"] = to_string(tx.wait());
            } else if (comm.rank() == 1) {
              Request r = comm.irecv(0, 2, std::span<float>(a));
              const double t0 = comm.now_s();
              f["timeout"] = to_string(r.wait(0.2));
              f["waited_enough"] = comm.now_s() - t0 >= 0.2 - 1e-9;
              f["still_pending"] = to_string(r.wait(0));
              r.cancel();
              f["after_cancel"] = {to_string(r.wait(0)), r.test()};
              bool threw = false;
              try {
                r.wait_ok();
              } catch (const CommError&) {
                threw = true;
              }
              f["wait_ok_throws"] = threw;
              const std::vector<Rank> set = {0, 2};
              Request any = comm.irecv_any(set, 8, std::span<float>(b));
              any.cancel();
              f["any_cancelled"] = to_string(any.wait());
              { Request dropped = comm.irecv(0, 8, std::span<float>(b)); }  // cancelled by its destructor
              token_to(comm, 0);
              comm.recv(0, 2, std::span<float>(a));
              Request r8 = comm.irecv(0, 8, std::span<float>(b));
              r8.wait_ok();
              r8.cancel();  // already complete: no effect
              f["values"] = {a[0], b[0]};
              f["cancel_after_done"] = to_string(r8.wait(0));
              comm.recv(0, 15, std::span<float>(a));
              f["recalled_send"] = a[0];
            }
          },
          [](nlohmann::json f) {
            Expect e;
            const auto& r1 = f[1];
            e(r1["timeout"] == "timeout" && r1["waited_enough"] == true, "timed wait " + r1.dump());
            e(r1["still_pending"] == "timeout", "a timed-out receive stays pending");
            e(r1["after_cancel"] == nlohmann::json({"cancelled", true}), "after cancel " + r1["after_cancel"].dump());
            e(r1["wait_ok_throws"] == true, "wait_ok on a cancelled receive must throw");
            e(r1["any_cancelled"] == "cancelled", "cancelled irecv_any");
            e(r1["values"] == nlohmann::json({42.0, 8.0}), "values " + r1["values"].dump());
            e(r1["cancel_after_done"] == "ok", "cancel after completion changed the status");
            e(f[0]["send_after_cancel"] == "ok" && r1["recalled_send"] == 5, "a cancelled send must still arrive");
            return e.failure;
          }};
}

}  // namespace

std::vector<Case> matching_cases() {
  return {ordering(), any_source_outsider(), wait_any_and_post_order(), timeouts_and_cancel()};
}

}  // namespace detail

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v = detail::matching_cases();
    for (auto& c : detail::transfer_cases()) v.push_back(std::move(c));
    for (auto& c : detail::round_cases()) v.push_back(std::move(c));
    for (auto& c : detail::wait_cases()) v.push_back(std::move(c));
    for (auto& c : detail::plan_cases()) v.push_back(std::move(c));
    return v;
  }();
  return all;
}

}  // namespace dts::conformance
