// Transfer cases of the conformance suite: zero-length and 64 MB messages (into a posted receive and as an
// unexpected one), the send snapshot, borrowed sends, receives that add, byte counters, sends to oneself, a
// spawned activity sharing the Comm, and the collectives (ring and tree allreduce, groups of 1) on top of it.
#include <numeric>

#include "algorithms/api/collective_only_compute.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/collectives/collectives.hpp"
#include "tests/conformance/comm_conformance.hpp"

namespace dts::conformance {
namespace detail {
namespace {

constexpr std::size_t kLarge = std::size_t{16} << 20;  // floats: 64 MB

float pattern(std::size_t i, int which) { return static_cast<float>(which == 0 ? i % 1021 : (i * 7) % 1009); }

bool has_pattern(const std::vector<float>& v, int which) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != pattern(i, which)) return false;
  }
  return true;
}

// Rank 1 posts the first 64 MB receive, then rank 0 sends: zero floats, 64 MB (its buffer overwritten right
// after isend), another 64 MB and a marker. Rank 1 takes the marker before posting the second big receive.
Case zero_and_large() {
  return {"zero_and_large", "zero-length and 64 MB messages arrive intact; a send snapshots its buffer; bytes count",
          [](Comm& comm, Node&, nlohmann::json& f) {
            std::vector<float> none, one = {1};
            if (comm.rank() == 0) {
              comm.recv(1, 24, std::span<float>(one));
              std::vector<float> big(kLarge);
              for (std::size_t i = 0; i < kLarge; ++i) big[i] = pattern(i, 0);
              std::vector<Request> tx;
              tx.push_back(comm.isend(1, 20, std::span<const float>(none)));
              tx.push_back(comm.isend(1, 21, std::span<const float>(big)));
              for (std::size_t i = 0; i < kLarge; ++i) big[i] = pattern(i, 1);  // the first send took a copy
              tx.push_back(comm.isend(1, 22, std::span<const float>(big)));
              tx.push_back(comm.isend(1, 23, std::span<const float>(one)));
              for (auto& r : tx) r.wait_ok();
              f["bytes_sent"] = comm.bytes_sent();
            } else if (comm.rank() == 1) {
              std::vector<float> first(kLarge), second(kLarge);
              Request rx = comm.irecv(0, 21, std::span<float>(first));
              comm.send(0, 24, std::span<const float>(one));
              comm.recv(0, 20, std::span<float>(none));
              rx.wait_ok();
              comm.recv(0, 23, std::span<float>(one));  // the second big message is unexpected by now
              comm.recv(0, 22, std::span<float>(second));
              f["intact"] = {has_pattern(first, 0), has_pattern(second, 1)};
              f["bytes_received"] = comm.bytes_received();
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[1]["intact"] == nlohmann::json({true, true}), "64 MB messages " + f[1]["intact"].dump());
            const std::uint64_t payload = 4 * (2 * kLarge + 1);
            e(f[0]["bytes_sent"] == payload, "bytes sent " + f[0]["bytes_sent"].dump());
            e(f[1]["bytes_received"] == payload, "bytes received " + f[1]["bytes_received"].dump());
            return e.failure;
          }};
}

// SendOptions::borrow: rank 0 sends 4 MB borrowed twice, once into a posted receive and once before rank 1
// posts it (unexpected), then overwrites its buffer once each send has completed. Rank 1 must get the values
// of send time both times: a borrowed message that nobody waits for at arrival is copied before its send ends.
Case borrowed_send() {
  return {"borrowed_send", "a borrowed send delivers the values of send time, into a posted receive or as unexpected",
          [](Comm& comm, Node&, nlohmann::json& f) {
            constexpr std::size_t n = std::size_t{1} << 20;
            SendOptions borrow;
            borrow.borrow = true;
            std::vector<float> one = {1};
            if (comm.rank() == 0) {
              std::vector<float> v(n);
              for (std::size_t i = 0; i < n; ++i) v[i] = pattern(i, 0);
              comm.recv(1, 41, std::span<float>(one));  // rank 1's first receive is posted
              comm.isend(1, 40, std::span<const float>(v), borrow).wait_ok();
              for (std::size_t i = 0; i < n; ++i) v[i] = pattern(i, 1);
              comm.isend(1, 42, std::span<const float>(v), borrow).wait_ok();
              std::fill(v.begin(), v.end(), -1.0f);
              comm.send(1, 43, std::span<const float>(one));
            } else if (comm.rank() == 1) {
              std::vector<float> first(n), second(n);
              Request rx = comm.irecv(0, 40, std::span<float>(first));
              comm.send(0, 41, std::span<const float>(one));
              rx.wait_ok();
              comm.recv(0, 43, std::span<float>(one));  // the second message is unexpected by now
              comm.recv(0, 42, std::span<float>(second));
              f["intact"] = {has_pattern(first, 0), has_pattern(second, 1)};
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[1]["intact"] == nlohmann::json({true, true}), "borrowed messages " + f[1]["intact"].dump());
            return e.failure;
          }};
}

// RecvOptions::add: rank 0 sends 1 MB twice, once into a posted receive with add and once before rank 1
// posts it (unexpected); both must be added into rank 1's buffer, not copied over it.
Case add_receive() {
  return {"add_receive", "a receive with add adds the message into its buffer, posted first or not",
          [](Comm& comm, Node&, nlohmann::json& f) {
            constexpr std::size_t n = std::size_t{1} << 18;
            RecvOptions add;
            add.add = true;
            std::vector<float> one = {1};
            if (comm.rank() == 0) {
              std::vector<float> v(n);
              for (std::size_t i = 0; i < n; ++i) v[i] = pattern(i, 0);
              comm.recv(1, 51, std::span<float>(one));  // rank 1's first receive is posted
              comm.send(1, 50, std::span<const float>(v));
              comm.send(1, 52, std::span<const float>(v));
              comm.send(1, 53, std::span<const float>(one));
            } else if (comm.rank() == 1) {
              std::vector<float> first(n, 0.5f), second(n, 0.25f);
              Request rx = comm.irecv(0, 50, std::span<float>(first), add);
              comm.send(0, 51, std::span<const float>(one));
              rx.wait_ok();
              comm.recv(0, 53, std::span<float>(one));  // the second message is unexpected by now
              comm.irecv(0, 52, std::span<float>(second), add).wait_ok();
              bool ok_first = true, ok_second = true;
              for (std::size_t i = 0; i < n; ++i) {
                ok_first = ok_first && first[i] == pattern(i, 0) + 0.5f;
                ok_second = ok_second && second[i] == pattern(i, 0) + 0.25f;
              }
              f["added"] = {ok_first, ok_second};
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[1]["added"] == nlohmann::json({true, true}), "added messages " + f[1]["added"].dump());
            return e.failure;
          }};
}

// Every rank sends to itself: a small message before its receive is posted, a 4 MB one by a blocking send
// (it must not wait for the receive), and one into a receive posted first.
Case self_send() {
  return {"self_send", "a rank may send to itself, blocking or not, before or after posting the receive",
          [](Comm& comm, Node&, nlohmann::json& f) {
            const Rank me = comm.rank();
            std::vector<float> v = {static_cast<float>(me)}, got(1), big(1 << 20, static_cast<float>(me)),
                               big_got(1 << 20);
            Request tx = comm.isend(me, 30, std::span<const float>(v));
            comm.recv(me, 30, std::span<float>(got));
            tx.wait_ok();
            f["unexpected"] = got[0];
            comm.send(me, 32, std::span<const float>(big));
            comm.recv(me, 32, std::span<float>(big_got));
            f["big"] = big_got == big;
            Request rx = comm.irecv(me, 31, std::span<float>(got));
            v[0] += 10;
            comm.send(me, 31, std::span<const float>(v));
            rx.wait_ok();
            f["posted"] = got[0];
            f["source"] = rx.source();
          },
          [](nlohmann::json f) {
            Expect e;
            for (int r = 0; r < kRanks; ++r) {
              e(f[r] == nlohmann::json({{"unexpected", r}, {"big", true}, {"posted", r + 10}, {"source", r}}),
                "rank " + std::to_string(r) + ": " + f[r].dump());
            }
            return e.failure;
          }};
}

// Rank 1 spawns a server that takes 3 messages from rank 0 (tag 40) into a sum behind the api's mutex, while
// its main activity plays 3 rounds of ping-pong with rank 2 (tag 41) on the same Comm.
Case spawned_activity() {
  return {"spawned_activity", "a spawned activity and the main one use one Comm concurrently; join waits for it",
          [](Comm& comm, Node& node, nlohmann::json& f) {
            const Rank me = comm.rank();
            std::vector<float> v(1);
            if (me == 0) {
              for (int i = 1; i <= 3; ++i) {
                node.sleep_for(0.01);
                v[0] = static_cast<float>(i);
                comm.send(1, 40, std::span<const float>(v));
              }
            } else if (me == 2) {
              for (int i = 0; i < 3; ++i) {
                comm.recv(1, 41, std::span<float>(v));
                v[0] += 1;
                comm.send(1, 41, std::span<const float>(v));
              }
            } else if (me == 1) {
              auto mutex = node.make_mutex();
              float sum = 0;
              auto server = node.spawn("server", [&] {
                std::vector<float> x(1);
                const std::vector<Rank> from = {0};
                for (int i = 0; i < 3; ++i) {
                  comm.irecv_any(from, 40, std::span<float>(x)).wait_ok();
                  std::lock_guard<Mutex> lock(*mutex);
                  sum += x[0];
                }
              });
              for (int i = 0; i < 3; ++i) {
                comm.send(2, 41, std::span<const float>(v));
                comm.recv(2, 41, std::span<float>(v));
              }
              server->join();
              f["sum"] = sum;
              f["pong"] = v[0];
            }
          },
          [](nlohmann::json f) {
            Expect e;
            e(f[1]["sum"] == 6 && f[1]["pong"] == 3, "rank 1: " + f[1].dump());
            return e.failure;
          }};
}

// Ring, tree and hypercube allreduce of v_r[i] = r * 1000 + i over the 4 ranks (11 floats: uneven ring
// chunks), the hypercube also over ranks 0-2 (not a power of two: rank 0 folds into rank 1), and each over a
// group of one rank (itself).
Case collectives() {
  return {"collectives",
          "ring, tree and hypercube allreduce built on the Comm give exact sums; a group of 1 is a no-op",
          [](Comm& comm, Node&, nlohmann::json& f) {
            CollectiveOnlyCompute compute;
            const Rank me = comm.rank();
            auto values = [&] {
              std::vector<float> v(11);
              for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(me * 1000 + static_cast<int>(i));
              return v;
            };
            for (const auto algo : {collectives::AllreduceAlgo::kRing, collectives::AllreduceAlgo::kTree,
                                    collectives::AllreduceAlgo::kHypercube, collectives::AllreduceAlgo::kAuto}) {
              std::vector<float> v = values();
              collectives::allreduce(algo, comm, compute, Group::range(0, comm.size()), Slice(v), 1000);
              f[collectives::to_string(algo)] = v;
              std::vector<float> w = {static_cast<float>(me)};
              collectives::allreduce(algo, comm, compute, Group({me}), Slice(w), 1100);
              f["alone"].push_back(w[0]);
            }
            if (me < 3) {
              std::vector<float> v = values();
              collectives::hypercube_allreduce(comm, compute, Group::range(0, 3), Slice(v), 1200);
              f["hypercube3"] = v;
            }
          },
          [](nlohmann::json f) {
            Expect e;
            std::vector<float> want(11), want3(11);
            for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<float>(6000 + 4 * static_cast<int>(i));
            for (std::size_t i = 0; i < want3.size(); ++i)
              want3[i] = static_cast<float>(3000 + 3 * static_cast<int>(i));
            for (int r = 0; r < kRanks; ++r) {
              e(f[r]["ring"] == nlohmann::json(want) && f[r]["tree"] == nlohmann::json(want) &&
                    f[r]["hypercube"] == nlohmann::json(want) && f[r]["auto"] == nlohmann::json(want),
                "rank " + std::to_string(r) + ": " + f[r].dump());
              e(f[r]["alone"] == nlohmann::json({r, r, r, r}), "group of 1 on rank " + std::to_string(r));
              if (r < 3)
                e(f[r]["hypercube3"] == nlohmann::json(want3), "hypercube over 3 on rank " + std::to_string(r));
            }
            return e.failure;
          }};
}

}  // namespace

std::vector<Case> transfer_cases() {
  return {zero_and_large(), borrowed_send(), add_receive(), self_send(), spawned_activity(), collectives()};
}

}  // namespace detail
}  // namespace dts::conformance
