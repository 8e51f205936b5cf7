// MpiComm: Request handles over the engine's operations, and the blocking primitive of wait_any.
#include "realexec/mpi_comm.hpp"

#include <algorithm>

#include "realexec/mpi_check.hpp"
#include "realexec/mpi_engine.hpp"

namespace dts::mpi {
namespace {

class MpiRequest final : public detail::RequestImpl {
 public:
  MpiRequest(std::shared_ptr<Engine> engine, std::shared_ptr<Op> op, double hang_timeout_s)
      : engine_(std::move(engine)), op_(std::move(op)), hang_timeout_s_(hang_timeout_s) {}
  // A pending receive must not write into a buffer its owner is about to free: cancel it (which waits if it
  // already matched). A pending send still completes: the engine keeps its snapshot.
  ~MpiRequest() override { engine_->cancel(*op_); }
  bool test() override { return engine_->test(*op_); }
  // An unbounded wait is bounded by the hang timeout: a peer that hangs must not hang this rank forever.
  Status wait(double timeout_s) override {
    const bool forever = timeout_s == kForever;
    if (!engine_->poll_until([this] { return engine_->test(*op_); }, forever ? hang_timeout_s_ : timeout_s)) {
      if (forever) throw CommError(engine_->hang_message(*op_, hang_timeout_s_));
      return Status::kTimeout;
    }
    return engine_->status(*op_);
  }
  Rank source() const override { return engine_->source(*op_); }
  void cancel() override { engine_->cancel(*op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Op> op_;
  double hang_timeout_s_;
};

}  // namespace

MpiComm::MpiComm(const MpiSession& /*session: MPI is initialized*/, double hang_timeout_s)
    : engine_(std::make_shared<Engine>(MPI_COMM_WORLD)),
      rank_(engine_->rank()),
      size_(engine_->size()),
      hang_timeout_s_(hang_timeout_s) {
  DTS_ASSERT(hang_timeout_s > 0, "the hang timeout must be positive");
  DTS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  t0_ = MPI_Wtime();
}

MpiComm::~MpiComm() = default;

double MpiComm::now_s() const { return MPI_Wtime() - t0_; }

Request MpiComm::isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& opts) {  // modeled_bytes: sim only
  return Request(std::make_unique<MpiRequest>(engine_, engine_->post_send(dst, tag, data, opts), hang_timeout_s_), this,
                 dst);
}

Request MpiComm::irecv(Rank src, Tag tag, Slice data, const RecvOptions& opts) {
  return Request(std::make_unique<MpiRequest>(engine_, engine_->post_recv({src}, tag, data, opts), hang_timeout_s_),
                 this);
}

Request MpiComm::irecv_any(std::span<const Rank> srcs, Tag tag, Slice data, const RecvOptions& opts) {
  DTS_ASSERT(!srcs.empty(), "irecv_any from an empty set of ranks");
  return Request(
      std::make_unique<MpiRequest>(
          engine_, engine_->post_recv(std::vector<Rank>(srcs.begin(), srcs.end()), tag, data, opts), hang_timeout_s_),
      this);
}

bool MpiComm::block_until(const std::function<bool()>& ready, std::size_t operations, double timeout_s) {
  // `ready` may test nothing of this Comm's: the failure is checked at every poll.
  const auto alive_and_ready = [&] {
    engine_->check_alive();
    return ready();
  };
  // An unbounded wait is bounded by the hang timeout, as Request::wait's.
  if (timeout_s != kForever) return engine_->poll_until(alive_and_ready, timeout_s);
  if (!engine_->poll_until(alive_and_ready, hang_timeout_s_))
    throw CommError(engine_->hang_message_any(operations, hang_timeout_s_));
  return true;
}

void MpiComm::drop_stale(Tag tag, Round before) { engine_->drop_stale(tag, before); }

Round MpiComm::max_round() const { return engine_->max_round(); }

std::uint64_t MpiComm::bytes_sent() const { return engine_->bytes_sent(); }
std::uint64_t MpiComm::bytes_received() const { return engine_->bytes_received(); }
std::uint64_t MpiComm::messages_sent() const { return engine_->messages_sent(); }

void MpiComm::quiesce() { engine_->quiesce(hang_timeout_s_); }

void MpiComm::fail_at(double at_s) { engine_->fail_at(t0_ + at_s); }

void MpiComm::check_alive() { engine_->check_alive(); }

}  // namespace dts::mpi
