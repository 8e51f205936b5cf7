// Where a rank's blocked time went, by peer: each wait that blocked is charged to the rank whose message
// (or whose receipt of this rank's message) ended it, or to no one when it timed out. Request::wait and
// Comm::wait_any charge it (algorithms/api/request.cpp), so both backends measure the same thing: on the
// simulator in simulated seconds, on MPI in wall seconds. A wait's whole blocked time counts, the awaited
// message's time on the wire included. One per rank, shared by its activities (threads on MPI): thread-safe.
// A map of the peers actually waited on, so its size follows the algorithm's fan-in, not the world's size.
#pragma once

#include <map>
#include <mutex>

#include "algorithms/api/request.hpp"

namespace dts {

class WaitLog {
 public:
  // `seconds` of one blocked wait that `peer` ended (-1: none did, the wait timed out). Nothing for 0 s.
  void add(Rank peer, double seconds);
  // Every blocked second, timeouts included (the sum over the activities of the rank that waited).
  double blocked_s() const;
  // Seconds by the peer that ended the waits, in rank order.
  std::map<Rank, double> waited_on() const;

 private:
  mutable std::mutex mu_;
  double blocked_s_ = 0;
  std::map<Rank, double> by_peer_;
};

}  // namespace dts
