// The seam on SimGrid: Comm over a SimWorld, and Node (spawn, mutex, sleep) as actors on the rank's host.
#pragma once

#include <exception>
#include <functional>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/node.hpp"
#include "sim/sim_world.hpp"

namespace dts::sim {

class SimComm final : public Comm {
 public:
  // `collectives`: the collective fidelity's engine, or null for message fidelity.
  SimComm(SimWorld& world, Rank rank, CollectiveEngine* collectives = nullptr)
      : world_(world), rank_(rank), collectives_(collectives) {}
  Rank rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  double now_s() const override;
  Request isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts = {}) override;
  Request irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts = {}) override;
  Request irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts = {}) override;
  void drop_stale(Tag tag, Round before) override { world_.drop_stale(rank_, tag, before); }
  bool block_until(const std::function<bool()>& ready, std::size_t operations, double timeout_s) override;
  std::uint64_t bytes_sent() const override { return world_.bytes_sent(rank_); }
  std::uint64_t bytes_received() const override { return world_.bytes_received(rank_); }
  CollectiveEngine* collective_engine() override { return collectives_; }
  // This rank is gone from now on (SimWorld::fail): for tests and fault scenarios.
  void fail() { world_.fail(rank_); }

 private:
  SimWorld& world_;
  Rank rank_;
  CollectiveEngine* collectives_;
};

class SimNode final : public Node {
 public:
  // What a spawned activity's exception (a peer's failure, an error) goes to: the launcher's stop of the run, as
  // for the rank's own actor. Without one it escapes the activity.
  using OnError = std::function<void(std::exception_ptr)>;
  // `account`: where the spawned activities' time goes and joins are recorded (null: not accounted).
  explicit SimNode(simgrid::s4u::Host* host, TimeAccount* account = nullptr, OnError on_error = {})
      : host_(host), account_(account), on_error_(std::move(on_error)) {}
  std::unique_ptr<Activity> spawn(const std::string& name, std::function<void()> fn) override;
  std::unique_ptr<Mutex> make_mutex() override;
  void sleep_for(double seconds) override;

 private:
  simgrid::s4u::Host* host_;
  TimeAccount* account_;
  OnError on_error_;
};

}  // namespace dts::sim
