// DTS_MPI_FAULT: reading it, and firing it.
#include "experiments/runner_mpi/run_mpi_fault.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/errors.hpp"

namespace dts::exp {

Fault read_fault(int world) {
  const char* env = std::getenv("DTS_MPI_FAULT");
  if (!env) return {};
  const std::string s(env), last = std::to_string(world - 1);
  const auto colon = s.find(':');
  const std::string rank = s.substr(0, colon), kind = colon == std::string::npos ? "" : s.substr(colon + 1);
  const bool digits = !rank.empty() && rank.size() <= 9 && rank.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || (kind != "throw" && kind != "kill" && kind != "hang"))
    throw InputError("DTS_MPI_FAULT", "\"" + s + "\": expected RANK:throw, RANK:kill or RANK:hang, RANK in 0-" + last);
  Fault f;
  f.rank = std::stoi(rank);
  if (f.rank >= world)
    throw InputError("DTS_MPI_FAULT",
                     "rank " + rank + " is not in this job of " + std::to_string(world) + " ranks (0-" + last + ")");
  f.kind = kind == "kill" ? Fault::Kind::kKill : kind == "hang" ? Fault::Kind::kHang : Fault::Kind::kThrow;
  return f;
}

void FaultPoint::fire() {
  if (!armed_ || fired_.exchange(true)) return;
  if (fault_.kind == Fault::Kind::kKill) std::raise(SIGKILL);
  if (fault_.kind == Fault::Kind::kHang) std::this_thread::sleep_for(std::chrono::hours(24));
  throw std::runtime_error("injected fault (DTS_MPI_FAULT)");
}

}  // namespace dts::exp
