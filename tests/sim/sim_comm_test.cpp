// SimComm against hand-computed expectations: transfer times, matching order, any-source receives,
// wait_any, timeouts, cancellation, zero-length and modeled-size messages, bandwidth sharing.
#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/sim/sim_harness.hpp"

using dts::ConstSlice;
using dts::Slice;
using dts::Status;
using dts::Vec;
using dts::test::pinned_star;
using dts::test::simulate;

namespace {
constexpr double kBw = 8e9;  // 1 GB/s
constexpr double kLat = 10e-6;
}  // namespace

TEST_CASE("sim::SimComm: one 1 MB message between two hosts", "[sim]") {
  /* In details:
   *   o 2 hosts of a star, each with one 1 GB/s, 10 us split-duplex link; LV08 with latency and bandwidth
   *     factors pinned to 1. The route crosses the sender's link UP and the receiver's link DOWN.
   * Expectations
   *   o arrival_s = 2 * 10e-6 + 1e6 / 1e9, for the receiver and for the sender's completion
   */
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto&, auto& o) {
    Vec buf(250'000, true);  // 1e6 bytes of floats
    if (comm.rank() == 0) {
      comm.send(1, 7, buf);
    } else {
      comm.recv(0, 7, buf);
    }
    o["t"] = comm.now_s();
  });
  REQUIRE(!out.contains("error"));
  REQUIRE(out["rank"][1]["t"].get<double>() == Approx(2 * kLat + 1e6 / 1e9).epsilon(1e-9));
  REQUIRE(out["rank"][0]["t"].get<double>() == Approx(2 * kLat + 1e6 / 1e9).epsilon(1e-9));
}

TEST_CASE("sim::SimComm: modeled bytes are charged, not the payload size", "[sim]") {
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto&, auto& o) {
    Vec none(0, true);
    if (comm.rank() == 0) {
      comm.send(1, 1, none, {.modeled_bytes = 100'000'000});
    } else {
      comm.recv(0, 1, none);
    }
    o["t"] = comm.now_s();
    o["sent"] = comm.bytes_sent();
    o["recv"] = comm.bytes_received();
  });
  REQUIRE(out["rank"][1]["t"].get<double>() == Approx(2 * kLat + 0.1).epsilon(1e-9));
  REQUIRE(out["rank"][0]["sent"] == 100'000'000);
  REQUIRE(out["rank"][1]["recv"] == 100'000'000);
}

TEST_CASE("sim::SimComm: data arrives intact and zero-length messages cost the latency", "[sim]") {
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto&, auto& o) {
    std::vector<float> v = {1.5f, -2.0f, 3.25f};
    Vec empty(0, true);
    if (comm.rank() == 0) {
      auto tx = comm.isend(1, 3, std::span<const float>(v));
      v[0] = 99.0f;  // the send snapshotted the buffer
      tx.wait_ok();
      comm.send(1, 4, empty);
    } else {
      std::vector<float> got(3);
      comm.recv(0, 3, std::span<float>(got));
      const double t0 = comm.now_s();
      comm.recv(0, 4, empty);
      o["got"] = got;
      o["zero_len_s"] = comm.now_s() - t0;
    }
  });
  REQUIRE(out["rank"][1]["got"] == nlohmann::json({1.5, -2.0, 3.25}));
  REQUIRE(out["rank"][1]["zero_len_s"].get<double>() == Approx(2 * kLat).epsilon(1e-9));
}

TEST_CASE("sim::SimComm: messages of one pair and tag match in send order", "[sim]") {
  // A 100 MB message then a 4-byte one: the small one wins the race on the wire, but must be received second.
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto&, auto& o) {
    if (comm.rank() == 0) {
      Vec big(25'000'000, false), small(1, true);
      auto a = comm.isend(1, 5, big);
      auto b = comm.isend(1, 5, small);
      a.wait_ok();
      b.wait_ok();
    } else {
      Vec first(25'000'000, false), second(1, true);
      auto a = comm.irecv(0, 5, first);
      auto b = comm.irecv(0, 5, second);
      b.wait_ok();
      o["second_done_s"] = comm.now_s();
      a.wait_ok();
    }
  });
  REQUIRE(!out.contains("error"));
  REQUIRE(out["rank"][1]["second_done_s"].get<double>() >= 0.1);
}

TEST_CASE("sim::SimComm: irecv_any and wait_any take the first arrival", "[sim]") {
  // Rank 1 sends after 1 ms, rank 2 after 2 ms, rank 3 never: rank 0 hears 1 first, then 2.
  const auto out = simulate(pinned_star(4, kBw, kLat), 4, [](auto& comm, auto& node, auto& o) {
    Vec one(1, true);
    if (comm.rank() == 0) {
      const std::vector<dts::Rank> from = {1, 2, 3};
      std::vector<dts::Request> reqs;
      reqs.push_back(comm.irecv_any(from, 9, one));
      Vec other(1, true);
      reqs.push_back(comm.irecv(2, 9, other));
      const auto first = comm.wait_any(reqs);
      o["first_index"] = first.index;
      o["first_source"] = first.source;
      o["first_valid_after"] = reqs[first.index].valid();
      const auto second = comm.wait_any(reqs);
      o["second_index"] = second.index;
      o["second_source"] = second.source;
    } else if (comm.rank() < 3) {
      node.sleep_for(1e-3 * comm.rank());
      comm.send(0, 9, one);
    }
  });
  const auto& r0 = out["rank"][0];
  REQUIRE(r0["first_index"] == 0);
  REQUIRE(r0["first_source"] == 1);
  REQUIRE(r0["first_valid_after"] == false);
  REQUIRE(r0["second_index"] == 1);
  REQUIRE(r0["second_source"] == 2);
}

TEST_CASE("sim::SimComm: a timed-out wait returns kTimeout at the deadline; cancel frees the message", "[sim]") {
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto& node, auto& o) {
    Vec a(1, true), b(1, true);
    if (comm.rank() == 1) {
      auto r = comm.irecv(0, 2, a);
      o["status"] = dts::to_string(r.wait(0.5));
      o["t"] = comm.now_s();
      r.cancel();
      o["after_cancel"] = dts::to_string(r.wait(0));
      comm.recv(0, 2, b);  // the message sent at t=1 goes to the live receive
      o["b"] = b.data()[0];
    } else {
      node.sleep_for(1.0);
      a.data()[0] = 42.0f;
      comm.send(1, 2, a);
    }
  });
  const auto& r1 = out["rank"][1];
  REQUIRE(r1["status"] == "timeout");
  REQUIRE(r1["t"].get<double>() == Approx(0.5).epsilon(1e-12));
  REQUIRE(r1["after_cancel"] == "cancelled");
  REQUIRE(r1["b"] == 42.0);
}

TEST_CASE("sim::SimComm: a send to a posted receive is copied at once but completes on arrival", "[sim]") {
  /* Rank 1 posts two receives from rank 0 on one tag; rank 0 sends two 1 MB messages at t = 1 ms, each
   * overwritten right after its isend. Both are delivered early (SimWorld), which must change nothing a rank
   * can see: the receives are still pending before arrival, complete one after the other as the two flows
   * share the link, and hold the values as they were sent. */
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto& node, auto& o) {
    Vec a(250'000, true), b(250'000, true);
    if (comm.rank() == 0) {
      node.sleep_for(1e-3);
      std::fill(a.data().begin(), a.data().end(), 1.0f);
      auto ta = comm.isend(1, 6, a);
      std::fill(a.data().begin(), a.data().end(), 2.0f);
      auto tb = comm.isend(1, 6, a);
      std::fill(a.data().begin(), a.data().end(), 3.0f);
      ta.wait_ok();
      tb.wait_ok();
    } else {
      auto ra = comm.irecv(0, 6, a);
      auto rb = comm.irecv(0, 6, b);
      node.sleep_for(1.5e-3);
      o["pending"] = !ra.test() && !rb.test();
      ra.wait_ok();
      rb.wait_ok();
      o["t"] = comm.now_s();
      o["a"] = {a.data().front(), a.data().back()};
      o["b"] = {b.data().front(), b.data().back()};
    }
  });
  const auto& r1 = out["rank"][1];
  REQUIRE(r1["pending"] == true);
  REQUIRE(r1["t"].get<double>() == Approx(1e-3 + 2 * kLat + 2e6 / 1e9).epsilon(1e-9));
  REQUIRE(r1["a"] == nlohmann::json({1.0, 1.0}));
  REQUIRE(r1["b"] == nlohmann::json({2.0, 2.0}));
}

TEST_CASE("sim::SimComm: a receive cancelled after early delivery gives its message to the next one", "[sim]") {
  // Rank 0 sends 1 MB of 7s at t = 0.1 ms (arrival 1.12 ms) into rank 1's posted receive; rank 1 cancels it
  // at 0.5 ms, overwrites the cancelled buffer and posts another receive, which must get the 7s at arrival.
  const auto out = simulate(pinned_star(2, kBw, kLat), 2, [](auto& comm, auto& node, auto& o) {
    Vec a(250'000, true), b(250'000, true);
    if (comm.rank() == 0) {
      std::fill(a.data().begin(), a.data().end(), 7.0f);
      node.sleep_for(0.1e-3);
      comm.send(1, 8, a, {.modeled_bytes = std::nullopt, .borrow = true});
    } else {
      auto r = comm.irecv(0, 8, a);
      node.sleep_for(0.5e-3);
      r.cancel();
      std::fill(a.data().begin(), a.data().end(), 0.0f);
      comm.recv(0, 8, b);
      o["t"] = comm.now_s();
      o["b"] = {b.data().front(), b.data().back()};
    }
  });
  const auto& r1 = out["rank"][1];
  REQUIRE(r1["t"].get<double>() == Approx(0.1e-3 + 2 * kLat + 1e6 / 1e9).epsilon(1e-9));
  REQUIRE(r1["b"] == nlohmann::json({7.0, 7.0}));
}

TEST_CASE("sim::SimComm: two flows into one NIC share its bandwidth", "[sim]") {
  // Ranks 1 and 2 each send 100 MB to rank 0 at t=0: rank 0's link DOWN carries both, at half rate each.
  const auto out = simulate(pinned_star(3, kBw, kLat), 3, [](auto& comm, auto&, auto& o) {
    Vec big(25'000'000, false);
    if (comm.rank() == 0) {
      Vec other(25'000'000, false);
      auto x = comm.irecv(1, 0, big);
      auto y = comm.irecv(2, 0, other);
      x.wait_ok();
      y.wait_ok();
      o["t"] = comm.now_s();
    } else {
      comm.send(0, 0, big);
    }
  });
  REQUIRE(out["rank"][0]["t"].get<double>() == Approx(2 * kLat + 0.2).epsilon(1e-6));
}

TEST_CASE("sim::SimComm: a simulation is bit-reproducible", "[sim]") {
  auto body = [](dts::sim::SimComm& comm, dts::sim::SimNode& node, nlohmann::json& o) {
    Vec v(1000, true);
    const int n = comm.size();
    for (int round = 0; round < 5; ++round) {
      node.sleep_for(1e-4 * ((comm.rank() * 7 + round) % 3));
      auto tx = comm.isend((comm.rank() + 1) % n, round, v);
      comm.recv((comm.rank() + n - 1) % n, round, v);
      tx.wait_ok();
      o["t"].push_back(comm.now_s());
    }
  };
  auto a = simulate(pinned_star(5, kBw, kLat), 5, body);
  auto b = simulate(pinned_star(5, kBw, kLat), 5, body);
  a.erase("host");  // wall time and memory of this machine
  b.erase("host");
  REQUIRE(a.dump() == b.dump());
}
