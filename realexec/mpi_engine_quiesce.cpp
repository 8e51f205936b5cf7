// Engine::quiesce: the end of a rank's plan on MPI (realexec/mpi_engine.cpp's header says why: every send
// completes, then one "finished" notice from every rank to every other replaces a barrier).
#include <algorithm>

#include "realexec/mpi_check.hpp"
#include "realexec/mpi_engine.hpp"
#include "realexec/mpi_engine_hangs.hpp"

namespace dts::mpi {

using hangs::no_progress_message;
using hangs::ranks_text;

void Engine::quiesce(double hang_timeout_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    DTS_ASSERT(!quiescing_, "quiesce called twice");
    quiescing_ = true;  // from now on this rank does not fail (check_alive_locked)
  }
  // 1. This rank's sends complete: every receiver drains its incoming messages while it waits here too.
  const bool sent = poll_until(
      [this] {
        std::lock_guard<std::mutex> lock(mu_);
        progress();
        return sends_pending_ == 0;
      },
      hang_timeout_s);
  if (!sent) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Rank> to;
    for (const auto& op : in_flight_) {
      if (!op->is_recv) to.push_back(op->dst);
    }
    throw CommError(no_progress_message(hang_timeout_s, ranks_text(to) + " to take this rank's last messages", {}));
  }
  // 2. Tell every peer that this rank is past step 1, and keep draining until every peer has said so. The
  //    wait restarts whenever a peer's word arrives: only a silence of twice the limit is a hang. A failed
  //    rank waits for the survivors without a limit: they train on, and bound their own waits. A survivor
  //    waits for a failed rank's word as for any other's: it comes once that rank's sends have completed,
  //    soon after its failure (it is here from then on).
  bool failed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed = failed_;
    for (Rank r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      DTS_MPI_CHECK(
          MPI_Isend(&kFinishedNotice, 1, MPI_INT, r, 0, notice_comm_, &finished_tx_[static_cast<std::size_t>(r)]));
    }
  }
  const auto count_finished = [this] {  // call with the lock held
    return static_cast<int>(std::count(finished_.begin(), finished_.end(), true));
  };
  for (int known = 1; known < size_;) {
    const bool moved = poll_until(
        [&] {
          std::lock_guard<std::mutex> lock(mu_);
          progress();
          return count_finished() > known;
        },
        failed ? kForever : 2 * hang_timeout_s);
    std::lock_guard<std::mutex> lock(mu_);
    if (!moved) {
      std::vector<Rank> missing;
      for (Rank r = 0; r < size_; ++r) {
        if (!finished_[static_cast<std::size_t>(r)]) missing.push_back(r);
      }
      throw CommError(no_progress_message(2 * hang_timeout_s, ranks_text(missing) + " to finish the plan", {}));
    }
    known = count_finished();
  }
  // 3. Every send has completed, so every staged transfer has too; so have the notices, which every peer
  //    has been receiving since its engine was built, and every peer's receive of them (its "finished" is the
  //    last notice it sends).
  std::lock_guard<std::mutex> lock(mu_);
  progress();
  for (auto& s : staging_) DTS_MPI_CHECK(MPI_Wait(&s->req, MPI_STATUS_IGNORE));
  DTS_MPI_CHECK(MPI_Waitall(size_, finished_tx_.data(), MPI_STATUSES_IGNORE));
  DTS_MPI_CHECK(MPI_Waitall(size_, failed_tx_.data(), MPI_STATUSES_IGNORE));
  staging_.clear();
  match_.clear_unexpected();
  quiesced_ = true;
}

}  // namespace dts::mpi
