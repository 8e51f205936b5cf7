// Request's non-virtual helpers.
#include "algorithms/api/request.hpp"

#include <string>

#include "core/errors.hpp"

namespace dts {

const char* to_string(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kTimeout:
      return "timeout";
    case Status::kPeerFailed:
      return "peer failed";
    case Status::kCancelled:
      return "cancelled";
  }
  return "?";
}

void Request::wait_ok() {
  const Status s = wait();
  if (s != Status::kOk) throw CommError(std::string("request failed: ") + to_string(s));
}

}  // namespace dts
