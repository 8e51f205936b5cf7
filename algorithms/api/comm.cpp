// Comm's backend-independent part: wait_any over the backend's block_until.
#include "algorithms/api/comm.hpp"

#include <algorithm>

#include "algorithms/api/wait_log.hpp"
#include "core/errors.hpp"

namespace dts {

Comm::Completion Comm::wait_any(std::span<Request> reqs, double timeout_s) {
  DTS_ASSERT(std::any_of(reqs.begin(), reqs.end(), [](const Request& r) { return r.valid(); }),
             "wait_any on no valid request");
  WaitLog* log = wait_log();
  const double begin_s = log != nullptr ? now_s() : 0;
  std::size_t index = 0;
  const bool any = block_until(
      [&] {
        for (std::size_t i = 0; i < reqs.size(); ++i) {
          if (reqs[i].valid() && reqs[i].test()) {
            index = i;
            return true;
          }
        }
        return false;
      },
      reqs.size(), timeout_s);
  if (!any) {
    if (log != nullptr) log->add(-1, now_s() - begin_s);
    return {reqs.size(), -1, Status::kTimeout};
  }
  Completion c{index, reqs[index].source(), reqs[index].wait(0)};  // no wait left to charge there
  reqs[index].charge_wait(begin_s, c.status);
  reqs[index].reset();
  return c;
}

}  // namespace dts
