// The seam's Comm on MPI (DESIGN.md §2), with the simulator's semantics: a send snapshots its data (unless
// SendOptions::borrow) and completes when MPI is done with it; receives match in post order, accept a set
// of sources, and must have the message's count exactly. Waits poll MPI with a short back-off;
// wait(timeout) returns kTimeout at the wall-clock deadline. Groups map to world ranks: the algorithms use
// point-to-point only, so no MPI communicator per Group is needed yet. A process that dies ends the whole
// job (Open MPI has no ULFM), so mpirun exits non-zero; a scenario failure is modeled instead (fail_at): the
// failed rank stops its algorithm and announces it, and its peers' operations with it complete with
// kPeerFailed, as on the simulator.
#pragma once

#include <memory>

#include "algorithms/api/comm.hpp"
#include "realexec/mpi_session.hpp"
#include "realexec/rank_gone.hpp"

namespace dts::mpi {

class Engine;

class MpiComm final : public Comm {
 public:
  static constexpr double kDefaultHangTimeoutS = 300;
  // Collective over MPI_COMM_WORLD: duplicates it (this Comm's messages never meet the runner's or another
  // Comm's), synchronizes, and starts the clock of now_s(). A wait with no timeout that sees no progress
  // for hang_timeout_s of wall time throws CommError naming the peer it waits for; a wait that depends on
  // several peers (irecv_any, wait_any) names those that have not finished the plan and stayed silent.
  explicit MpiComm(const MpiSession& session, double hang_timeout_s = kDefaultHangTimeoutS);
  ~MpiComm() override;
  Rank rank() const override { return rank_; }
  int size() const override { return size_; }
  double now_s() const override;  // wall seconds since the constructor's barrier (MPI_Wtime)
  Request isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts = {}) override;
  Request irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts = {}) override;
  Request irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts = {}) override;
  void drop_stale(Tag tag, Round before) override;
  bool block_until(const std::function<bool()>& ready, std::size_t operations, double timeout_s) override;
  // Real bytes of the messages (4 per float): modeled_bytes is a simulator notion and is ignored here.
  // Sent bytes count at isend, received bytes when a receive completes.
  std::uint64_t bytes_sent() const override;
  std::uint64_t bytes_received() const override;
  std::uint64_t messages_sent() const;
  Round max_round() const override;
  // Collective: returns once every rank's sends have completed (receivers keep draining meanwhile), then
  // drops messages no receive took. Call once, after the algorithm returned on this rank (or failed on it)
  // and its activities were joined, before the Comm is destroyed; without it the destructor leaks what MPI
  // may still touch. A failed rank waits here, taking and dropping its peers' messages, until every other
  // rank has finished.
  void quiesce();
  // This rank fails at at_s on now_s()'s clock (a scenario failure): its first call into this Comm after
  // that (a send, a receive, drop_stale, a test or wait, block_until, check_alive) tells every other rank
  // that it has failed and throws RankGone, as every later call does. Not once quiesce has begun.
  void fail_at(double at_s);
  // Throws RankGone once this rank has failed (fail_at); for the calls that do not go through the Comm
  // (MpiCompute's).
  void check_alive();

 private:
  std::shared_ptr<Engine> engine_;
  Rank rank_ = 0;
  int size_ = 1;
  double t0_ = 0;
  double hang_timeout_s_;
};

}  // namespace dts::mpi
