// One rank's part of a scenario on MPI (algorithms/api/scenario.hpp): its compute stretched by sleeping, and
// its failure. Link changes have no meaning on real processes (the runner refuses them); joins and leaves are the
// algorithm's (Context, enter_run).
#pragma once

#include <cstdint>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/scenario.hpp"
#include "realexec/mpi_comm.hpp"

namespace dts::mpi {

class RankScenario {
 public:
  // `scenario` must outlive this.
  RankScenario(const Scenario& scenario, Rank rank);
  // The clock of the scenario's times: `comm`'s now_s (wall seconds since the plan's start), and the Comm
  // that fails at this rank's failure (MpiComm::fail_at). Until it is set, nothing is slowed and nothing
  // fails (the compute before the Comm exists is setup).
  void start(MpiComm& comm);
  bool active() const { return slows_ || fails_; }
  bool fails() const { return fails_; }

  // Throws RankGone once this rank's failure time has passed, announcing the failure at the first call
  // (MpiComm::check_alive): for the compute calls, which do not go through the Comm.
  void check_alive() const;
  // Compute of this rank's step `step` began at `start_s` and took `measured_s` of wall time: sleeps until it
  // has taken the scenario's stretch() of that.
  void stretch(std::int64_t step, double start_s, double measured_s) const;
  double now_s() const { return comm_ != nullptr ? comm_->now_s() : 0; }

 private:
  const Scenario& scenario_;
  Rank rank_;
  MpiComm* comm_ = nullptr;
  bool slows_, fails_ = false;
  double fail_at_s_ = kNever;
};

}  // namespace dts::mpi
