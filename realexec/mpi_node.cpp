// MpiNode: threads, mutexes and sleeps.
#include "realexec/mpi_node.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>

#include "realexec/mpi_session.hpp"
#include "realexec/rank_gone.hpp"

namespace dts::mpi {
namespace {

class ThreadActivity final : public Activity {
 public:
  explicit ThreadActivity(std::thread t) : thread_(std::move(t)) {}
  ~ThreadActivity() override { join(); }
  void join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// Handed over in the order the lockers came (a ticket lock), as SimGrid's mutex is: a learner that unlocks and
// locks again at once must not starve BIDMach's communicator waiting for the model.
class FifoMutex final : public Mutex {
 public:
  void lock() override {
    std::unique_lock<std::mutex> hold(m_);
    const std::uint64_t ticket = next_++;
    turn_.wait(hold, [&] { return serving_ == ticket; });
  }
  void unlock() override {
    {
      const std::lock_guard<std::mutex> hold(m_);
      ++serving_;
    }
    turn_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable turn_;
  std::uint64_t next_ = 0, serving_ = 0;
};

}  // namespace

std::unique_ptr<Activity> MpiNode::spawn(const std::string& name, std::function<void()> fn) {
  const Rank rank = rank_;
  return std::make_unique<ThreadActivity>(std::thread([rank, name, fn = std::move(fn)] {
    try {
      fn();
    } catch (const RankGone&) {
      // its rank failed (a scenario failure): the activity ends here
    } catch (const std::exception& e) {
      MpiSession::abort_job("rank " + std::to_string(rank) + ": error in activity " + name + ": " + e.what(), 1);
    } catch (...) {
      MpiSession::abort_job("rank " + std::to_string(rank) + ": error in activity " + name, 1);
    }
  }));
}

std::unique_ptr<Mutex> MpiNode::make_mutex() { return std::make_unique<FifoMutex>(); }

void MpiNode::sleep_for(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace dts::mpi
