// The fault-injection hook of `dtsim run --backend mpi`, for tests: DTS_MPI_FAULT="R:throw", "R:kill" or
// "R:hang" makes rank R throw, die by SIGKILL, or sleep for a day, once, at a well-defined point of its work:
//   a rank that trains (one of the plan's workers): when it records its step 2;
//   a rank that trains no model (the ranks below ranks - workers: rank 0 of the algorithms with a center,
//     master, parameter server or host CPU rank): when it sends its 2nd message;
//   either, if the fault has not fired by then: when its part of the plan returns (a plan of one step; the
//     CPU rank of easgd_sync variants 2-3, which has nothing to do).
// A fault ends the job, as any rank's error; the scenario's failures, modeled, do not (MpiComm::fail_at).
#pragma once

#include <atomic>
#include <cstdint>

#include "algorithms/api/comm.hpp"

namespace dts::exp {

struct Fault {
  enum class Kind { kThrow, kKill, kHang };
  Rank rank = -1;  // -1: no fault
  Kind kind = Kind::kThrow;
};

// DTS_MPI_FAULT, or no fault when it is unset. InputError naming it when it is malformed or when R is not a
// rank of a job of `world` ranks.
Fault read_fault(int world);

// One rank's view of the fault during one plan. Thread-safe: activities step and send concurrently.
class FaultPoint {
 public:
  FaultPoint(const Fault& fault, Rank rank, bool trains) : fault_(fault), armed_(fault.rank == rank), trains_(trains) {}
  // Whether the rank's sends must be watched: the fault is aimed at it.
  bool armed() const { return armed_; }
  void step(std::int64_t step) {
    if (trains_ && step == 2) fire();
  }
  void sent() {
    if (!trains_ && ++sends_ == 2) fire();
  }
  void plan_returned() { fire(); }

 private:
  void fire();  // once, and only on the rank aimed at
  Fault fault_;
  bool armed_, trains_;
  std::atomic<int> sends_{0};
  std::atomic<bool> fired_{false};
};

// The Comm the algorithm sees on the rank a fault is aimed at: `inner`, telling `fault` of every send.
class FaultComm final : public Comm {
 public:
  FaultComm(Comm& inner, FaultPoint& fault) : inner_(inner), fault_(fault) {}
  Rank rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  double now_s() const override { return inner_.now_s(); }
  Request isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts = {}) override {
    fault_.sent();
    return inner_.isend(dst, tag, data, opts);
  }
  Request irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts = {}) override {
    return inner_.irecv(src, tag, data, opts);
  }
  Request irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts = {}) override {
    return inner_.irecv_any(srcs, tag, data, opts);
  }
  void drop_stale(Tag tag, Round before) override { inner_.drop_stale(tag, before); }
  bool block_until(const std::function<bool()>& ready, std::size_t operations, double timeout_s) override {
    return inner_.block_until(ready, operations, timeout_s);
  }
  std::uint64_t bytes_sent() const override { return inner_.bytes_sent(); }
  std::uint64_t bytes_received() const override { return inner_.bytes_received(); }
  CollectiveEngine* collective_engine() override { return inner_.collective_engine(); }
  WaitLog* wait_log() const override { return inner_.wait_log(); }
  Round max_round() const override { return inner_.max_round(); }

 private:
  Comm& inner_;
  FaultPoint& fault_;
};

}  // namespace dts::exp
