// The node half of the seam: concurrent activities on the same node and what they share.
// sim/: an activity is an actor on the rank's host and the mutex a simulation mutex; realexec/: a thread
// and a std::mutex. Activities of one rank share its Comm (use distinct tags) and its Compute.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace dts {

class Activity {
 public:
  virtual ~Activity() = default;
  virtual void join() = 0;
};

// BasicLockable, so std::lock_guard and std::unique_lock work. Fair on both backends: the lock goes to the
// waiters in the order they came.
class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual std::unique_ptr<Activity> spawn(const std::string& name, std::function<void()> fn) = 0;
  virtual std::unique_ptr<Mutex> make_mutex() = 0;
  // Lets (simulated or wall) time pass.
  virtual void sleep_for(double seconds) = 0;
};

}  // namespace dts
