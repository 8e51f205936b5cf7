// MpiComm: Request handles over the engine's operations, and wait_any.
#include "realexec/mpi_comm.hpp"

#include <algorithm>

#include "realexec/mpi_check.hpp"
#include "realexec/mpi_engine.hpp"

namespace dts::mpi {
namespace {

class MpiRequest final : public detail::RequestImpl {
 public:
  MpiRequest(std::shared_ptr<Engine> engine, std::shared_ptr<Op> op) : engine_(std::move(engine)), op_(std::move(op)) {}
  // A pending receive must not write into a buffer its owner is about to free: cancel it (which waits if it
  // already matched). A pending send still completes: the engine keeps its snapshot.
  ~MpiRequest() override { engine_->cancel(*op_); }
  bool test() override { return engine_->test(*op_); }
  Status wait(double timeout_s) override {
    if (!Engine::poll_until([this] { return engine_->test(*op_); }, timeout_s)) return Status::kTimeout;
    return engine_->status(*op_);
  }
  Rank source() const override { return engine_->source(*op_); }
  void cancel() override { engine_->cancel(*op_); }

 private:
  std::shared_ptr<Engine> engine_;
  std::shared_ptr<Op> op_;
};

}  // namespace

MpiComm::MpiComm(const MpiSession& /*session: MPI is initialized*/)
    : engine_(std::make_shared<Engine>(MPI_COMM_WORLD)), rank_(engine_->rank()), size_(engine_->size()) {
  DTS_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  t0_ = MPI_Wtime();
}

MpiComm::~MpiComm() = default;

double MpiComm::now_s() const { return MPI_Wtime() - t0_; }

Request MpiComm::isend(Rank dst, Tag tag, ConstSlice data, const SendOptions& /*opts: modeled_bytes*/) {
  return Request(std::make_unique<MpiRequest>(engine_, engine_->post_send(dst, tag, data)));
}

Request MpiComm::irecv(Rank src, Tag tag, Slice data) {
  return Request(std::make_unique<MpiRequest>(engine_, engine_->post_recv({src}, tag, data)));
}

Request MpiComm::irecv_any(std::span<const Rank> srcs, Tag tag, Slice data) {
  DTS_ASSERT(!srcs.empty(), "irecv_any from an empty set of ranks");
  return Request(std::make_unique<MpiRequest>(
      engine_, engine_->post_recv(std::vector<Rank>(srcs.begin(), srcs.end()), tag, data)));
}

Comm::Completion MpiComm::wait_any(std::span<Request> reqs) {
  DTS_ASSERT(std::any_of(reqs.begin(), reqs.end(), [](const Request& r) { return r.valid(); }),
             "wait_any on no valid request");
  std::size_t index = 0;
  Engine::poll_until(
      [&] {
        for (std::size_t i = 0; i < reqs.size(); ++i) {
          if (reqs[i].valid() && reqs[i].test()) {
            index = i;
            return true;
          }
        }
        return false;
      },
      kForever);
  Completion c{index, reqs[index].source(), reqs[index].wait(0)};
  reqs[index].reset();
  return c;
}

std::uint64_t MpiComm::bytes_sent() const { return engine_->bytes_sent(); }
std::uint64_t MpiComm::bytes_received() const { return engine_->bytes_received(); }
std::uint64_t MpiComm::messages_sent() const { return engine_->messages_sent(); }

void MpiComm::quiesce() { engine_->quiesce(); }

}  // namespace dts::mpi
