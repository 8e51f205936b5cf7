// Message matching for one rank on top of MPI, with the simulator's semantics (sim/sim_world.hpp): a send
// snapshots its data; every message is matched, on arrival, against this rank's posted receives in post
// order, or queued as unexpected and taken by the first later receive that matches it; a receive may accept
// a set of sources. MPI cannot receive from a set of ranks, so matching lives here rather than in MPI: the
// engine drains MPI with matched probes (mpi_engine.cpp explains why). A scenario failure is modeled, as the
// simulator's (algorithms/api/matching.hpp): the failed rank's engine announces it to every other, whose
// operations with it then complete with kPeerFailed. Internal to realexec/.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/matching.hpp"
#include "core/no_copy.hpp"
#include "realexec/rank_gone.hpp"
#include "realexec/tag_codec.hpp"

namespace dts::mpi {

struct Op;

// A message that arrived before any receive wanted it, copied into a buffer the engine owns.
struct Staged {
  matching::Envelope env;
  std::vector<float> data;
  MPI_Request req = MPI_REQUEST_NULL;  // the MPI_Imrecv filling `data`
  bool arrived = false;
  std::shared_ptr<Op> taker;  // a receive matched while the data was still arriving
};

// One operation; shared by its Request and, while in flight, by the engine. Guarded by the engine's mutex.
struct Op {
  bool is_recv = false;
  bool done = false;
  Rank dst = -1;  // send: its destination
  Status status = Status::kOk;
  Rank source = -1;                    // sender of a matched receive; the failed peer for kPeerFailed
  MPI_Request req = MPI_REQUEST_NULL;  // send: the MPI_Isend; matched receive: the MPI_Imrecv into buf
  std::vector<float> payload;          // send: the snapshot, alive until MPI is done with it
  matching::Want want;                 // receive: acceptable senders, tag, count; send: the tag
  Slice buf;                           // receive: the caller's buffer
  bool add = false;                    // receive: buf += message
  std::unique_ptr<float[]> landing;    // receive with add: where MPI puts the message (buf.count floats)
};

class Engine : NoCopy {
 public:
  // Collective over `parent`: duplicates it, so that these messages never meet other traffic.
  explicit Engine(MPI_Comm parent);
  ~Engine();
  int rank() const { return rank_; }
  int size() const { return size_; }

  // `borrow` (SendOptions::borrow): MPI reads `data` in place; otherwise the send snapshots it. A send to a
  // failed peer completes with kPeerFailed: at once, or, if it was on its way when the failure was announced,
  // once MPI is done with it (the failed rank takes and drops it).
  std::shared_ptr<Op> post_send(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts);
  // `add` (RecvOptions::add): the message lands in a buffer of the engine and is added into `buf`. A receive
  // that accepts a failed peer completes with kPeerFailed, source() naming it, unless a message that arrived
  // before the failure's announcement matches it (Matcher::fail, failed_source).
  std::shared_ptr<Op> post_recv(std::vector<Rank> srcs, Tag tag, Slice buf, const RecvOptions& opts);
  void drop_stale(Tag tag, Round before);
  Round max_round() const { return codec_.max_round(); }
  // Drives progress once (non-blocking); true when `op` is complete.
  bool test(Op& op);
  // Failure of this rank (a scenario failure), at MPI_Wtime() `wtime`: post_send, post_recv, drop_stale, test
  // and check_alive called at or after it announce the failure to every other rank (once) and throw
  // RankGone, as they do from then on. cancel and quiesce still work: the failed rank's engine goes on taking
  // and dropping its peers' messages until the end. A rank already in quiesce does not fail.
  void fail_at(double wtime);
  void check_alive();
  Status status(const Op& op);
  Rank source(const Op& op);
  // A posted receive completes as kCancelled. A receive already matched cannot be: its data is landing in
  // the caller's buffer, so cancel() waits for it and the receive completes normally. Sends: no effect.
  void cancel(Op& op);
  // Calls `ready` (without the engine's lock held), with a growing back-off between calls, until it returns
  // true (then true) or timeout_s of wall time has passed (then false).
  template <typename Ready>
  bool poll_until(Ready ready, double timeout_s) const;
  // Collective: returns once every rank's sends have completed, draining incoming messages meanwhile.
  // Messages that no receive took are dropped. Call once, after the algorithm returned on this rank (or
  // failed on it). Throws CommError naming the ranks it waits for when it sees no progress for
  // hang_timeout_s (its own sends) or twice that (the other ranks' end: a rank still inside the algorithm,
  // which knows whom it waits for, should report a hang first). A failed rank waits for the others' end
  // without a limit: the survivors' own waits are bounded, and a survivor that gives up ends the job.
  void quiesce(double hang_timeout_s);
  // The errors of a wait that saw no progress for timeout_s, on `op` or on any of `operations` requests:
  // "waited 2 s for a message from rank 2 (tag 7) with no progress: ...". Where the wait depends on
  // several peers, they name those that have not finished the plan and sent nothing in that time.
  std::string hang_message(const Op& op, double timeout_s);
  std::string hang_message_any(std::size_t operations, double timeout_s);

  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t bytes_received() const { return bytes_received_; }
  std::uint64_t messages_sent() const { return messages_sent_; }

 private:
  // The notices a rank sends about itself on notice_comm_, one int each.
  static constexpr int kFinishedNotice = 0;
  static constexpr int kFailedNotice = 1;
  // How long a wait spins before it yields (poll_until): 20 us where this machine has a core for each of its
  // ranks, 0 where they outnumber its cores.
  static constexpr double kSpinS = 20e-6;
  double spin_s_ = 0;

  void progress();  // lock held
  void complete_recv(Op& op);
  void deliver(Op& op, const Staged& s);
  // Lock held: the notices that have arrived (a peer failed, a peer finished), each receive posted again
  // after a "failed" for the peer's "finished", which follows it.
  void take_notices();
  void fail_peer(Rank r);     // lock held: r's failure, announced
  void check_alive_locked();  // lock held: check_alive
  bool poll_op(Op& op);       // test() without the failure check: for cancel, which runs in destructors
  // Lock held: "...: rank 2 has hung or died, silent all that time", naming among `peers` (when more
  // than one) those that have not finished and sent nothing in the last timeout_s.
  std::string hang_text(double timeout_s, const std::string& what, const std::vector<Rank>& peers);

  std::mutex mu_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  TagCodec codec_{32767};  // set from the communicator's MPI_TAG_UB
  bool quiescing_ = false, quiesced_ = false;
  // Receives no message has matched yet, and staged messages no receive took yet.
  matching::Matcher<Op, Staged> match_;
  std::vector<std::shared_ptr<Op>> in_flight_;    // sends, and matched receives, whose MPI request is pending
  std::vector<std::shared_ptr<Staged>> staging_;  // staged messages whose data is still arriving
  std::size_t sends_pending_ = 0;
  // Per peer: MPI_Wtime of its last message, and the notices about itself it sends every rank on
  // notice_comm_ (one int each, received into notice_word_ by notice_rx_, always posted until "finished"):
  // "failed", at its failure (fail_at), and "finished", once its sends have completed (quiesce, step 2).
  std::vector<double> last_heard_;
  MPI_Comm notice_comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> notice_rx_, finished_tx_, failed_tx_;
  std::vector<int> notice_word_;
  std::vector<bool> finished_, peer_failed_;
  double fail_at_wtime_;  // this rank's failure (fail_at); never: infinity
  bool failed_ = false;   // this rank has failed and announced it
  std::atomic<std::uint64_t> bytes_sent_{0}, bytes_received_{0}, messages_sent_{0};
};

// Spin first where each rank has a core (a small message's reply is microseconds away, and a yield is a system
// call and a trip through the scheduler), then yield, then sleep, growing to 0.5 ms, so that ranks that
// outnumber the cores, or that wait for a long computation, leave the CPU to the others. A template: the
// predicate is called at every turn of a spin that a 4 KiB exchange spends about a microsecond in.
template <typename Ready>
bool Engine::poll_until(Ready ready, double timeout_s) const {
  const double start = MPI_Wtime(), spin_until = start + spin_s_;
  const double deadline = timeout_s == kForever ? kForever : start + timeout_s;
  for (int idle = 0;;) {
    // While spinning, the clock (a few tens of ns) is read at every 8th turn only.
    for (int turn = 0; turn < (idle == 0 ? 8 : 1); ++turn) {
      if (ready()) return true;
    }
    const double now = MPI_Wtime();
    if (timeout_s != kForever && now >= deadline) return false;
    if (now < spin_until) continue;
    if (idle < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(std::min(500, 5 * (idle - 63))));
    }
    ++idle;
  }
}

}  // namespace dts::mpi
