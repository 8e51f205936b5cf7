// RankScenario: sleeps and the failure check.
#include "realexec/mpi_scenario.hpp"

#include <chrono>
#include <sstream>
#include <thread>

#include "core/errors.hpp"

namespace dts::mpi {

RankScenario::RankScenario(const Scenario& scenario, Rank rank)
    : scenario_(scenario), rank_(rank), slows_(scenario.slows(rank)) {
  for (const RankEvent& f : scenario.failures) {
    if (f.rank == rank) {
      fails_ = true;
      fail_at_s_ = f.at_s;
    }
  }
}

void RankScenario::check_alive() const {
  if (!fails_ || clock_ == nullptr) return;
  const double now = clock_->now_s();
  if (now < fail_at_s_) return;
  std::ostringstream what;
  what << "the run stopped at wall time " << now << " s: rank " << rank_ << " failed (" << scenario_.where
       << "/failures: rank " << rank_ << " at " << fail_at_s_ << " s)";
  throw CommError(what.str());
}

void RankScenario::stretch(std::int64_t step, double start_s, double measured_s) const {
  if (!slows_ || clock_ == nullptr) return;
  const double extra = scenario_.stretch(rank_, step, start_s, measured_s) - measured_s;
  if (extra > 0) std::this_thread::sleep_for(std::chrono::duration<double>(extra));
}

}  // namespace dts::mpi
