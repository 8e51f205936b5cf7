// SimComm requests: thin handles over the SimWorld's OpStates; blocking waits park the actor on its rank's
// condition variable in simulated time.
#include "sim/sim_comm.hpp"

#include "sim/actor_stack.hpp"
#include "sim/time_account.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

class SimRequest final : public detail::RequestImpl {
 public:
  SimRequest(SimWorld& world, std::shared_ptr<OpState> op) : world_(world), op_(std::move(op)) {}
  ~SimRequest() override { world_.cancel(*op_); }  // a pending receive must not write into a dead buffer
  bool test() override { return op_->done; }
  Status wait(double timeout_s) override {
    TimeAccount* account = world_.time_account();
    if (account != nullptr) account->wait_begin();
    const bool done = world_.wait_until(
        op_->owner, [this] { return op_->done; }, timeout_s);
    if (account != nullptr) account->wait_end(done ? op_->trace.get() : nullptr);
    return done ? op_->status : Status::kTimeout;
  }
  Rank source() const override { return op_->source; }
  void cancel() override { world_.cancel(*op_); }

 private:
  SimWorld& world_;
  std::shared_ptr<OpState> op_;
};

class SimActivity final : public Activity {
 public:
  SimActivity(sg4::ActorPtr actor, TimeAccount* account) : actor_(std::move(actor)), account_(account) {}
  void join() override {
    if (account_ != nullptr) account_->join_begin();
    actor_->join();
    if (account_ != nullptr) account_->join_end(actor_->get_pid());
  }

 private:
  sg4::ActorPtr actor_;
  TimeAccount* account_;
};

class SimMutex final : public Mutex {
 public:
  void lock() override { m_->lock(); }
  void unlock() override { m_->unlock(); }

 private:
  sg4::MutexPtr m_ = sg4::Mutex::create();
};

}  // namespace

double SimComm::now_s() const { return sg4::Engine::get_clock(); }

Request SimComm::isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts) {
  const std::uint64_t bytes = opts.modeled_bytes.value_or(sizeof(float) * data.count);
  return Request(std::make_unique<SimRequest>(world_, world_.post_send(rank_, dst, tag, data, bytes, opts)), this, dst);
}

Request SimComm::irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts) {
  DTS_ASSERT(src >= 0 && src < size(), "receive from a rank outside the world");
  return Request(std::make_unique<SimRequest>(world_, world_.post_recv(rank_, {src}, tag, data, opts)), this);
}

Request SimComm::irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts) {
  return Request(std::make_unique<SimRequest>(
                     world_, world_.post_recv(rank_, std::vector<Rank>(srcs.begin(), srcs.end()), tag, data, opts)),
                 this);
}

bool SimComm::block_until(const std::function<bool()>& ready, std::size_t /*operations*/, double timeout_s) {
  TimeAccount* account = world_.time_account();
  if (account != nullptr) account->wait_begin();  // ended by the completed request's wait()
  const bool done = world_.wait_until(rank_, ready, timeout_s);
  if (!done && account != nullptr) account->wait_end(nullptr);
  return done;
}

std::unique_ptr<Activity> SimNode::spawn(const std::string& name, std::function<void()> fn) {
  const TimeAccount::SpawnedBy parent{sg4::this_actor::get_pid()};
  return std::make_unique<SimActivity>(
      start_actor(name, host_, kActivityStackKiB,
                  [account = account_, parent, on_error = on_error_, fn = std::move(fn)] {
                    const TimeAccount::ActorScope accounted(account, parent);
                    try {
                      fn();
                    } catch (const RankGone&) {
                      // its rank failed: the activity ends here
                    } catch (const simgrid::ForcefulKillException&) {
                      throw;  // SimGrid unwinds killed actors with this
                    } catch (...) {
                      if (!on_error) throw;
                      on_error(std::current_exception());
                    }
                  }),
      account_);
}

std::unique_ptr<Mutex> SimNode::make_mutex() { return std::make_unique<SimMutex>(); }

void SimNode::sleep_for(double seconds) { sg4::this_actor::sleep_for(seconds); }

}  // namespace dts::sim
