// RankScenario: sleeps and the failure check.
#include "realexec/mpi_scenario.hpp"

#include <chrono>
#include <thread>

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

void RankScenario::start(MpiComm& comm) {
  comm_ = &comm;
  if (fails_) comm.fail_at(fail_at_s_);
}

void RankScenario::check_alive() const {
  if (fails_ && comm_ != nullptr) comm_->check_alive();
}

void RankScenario::stretch(std::int64_t step, double start_s, double measured_s) const {
  if (!slows_ || comm_ == nullptr) return;
  const double extra = scenario_.stretch(rank_, step, start_s, measured_s) - measured_s;
  if (extra > 0) std::this_thread::sleep_for(std::chrono::duration<double>(extra));
}

}  // namespace dts::mpi
