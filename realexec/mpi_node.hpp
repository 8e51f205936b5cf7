// The seam's Node on real processes: an activity is a std::thread of the rank's process, the mutex a
// FIFO ticket lock, and sleep_for lets wall time pass. Activities share the rank's MpiComm (thread-safe; use
// distinct tags). An activity that throws cannot be reported to a main activity that may be waiting for its
// messages, so it ends the job (MpiSession::abort_job), as an exception at the rank boundary does; an
// activity of a failed rank (RankGone) just ends.
#pragma once

#include "algorithms/api/node.hpp"
#include "algorithms/api/request.hpp"

namespace dts::mpi {

class MpiNode final : public Node {
 public:
  explicit MpiNode(Rank rank) : rank_(rank) {}
  // The thread starts at once; join it with Activity::join (its destructor joins too).
  std::unique_ptr<Activity> spawn(const std::string& name, std::function<void()> fn) override;
  std::unique_ptr<Mutex> make_mutex() override;
  void sleep_for(double seconds) override;

 private:
  Rank rank_;
};

}  // namespace dts::mpi
