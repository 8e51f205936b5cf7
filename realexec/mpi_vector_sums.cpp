// VectorSums: MPI_Ireduce on a communicator of the members, each sum's buffers kept until it completes.
#include "realexec/mpi_vector_sums.hpp"

#include <climits>
#include <list>

#include "realexec/mpi_check.hpp"

namespace dts::mpi {

struct VectorSums::State {
  struct Pending {
    std::int64_t key = 0;
    std::vector<double> mine, sum;  // MPI reads `mine` and writes `sum` (root) until `req` completes
    MPI_Request req = MPI_REQUEST_NULL;
  };
  MPI_Comm comm = MPI_COMM_NULL;
  bool root = false;
  std::list<Pending> pending;  // in start order; a list, so that buffers never move

  std::vector<std::pair<std::int64_t, std::vector<double>>> collect(bool wait) {
    std::vector<std::pair<std::int64_t, std::vector<double>>> done;
    for (auto it = pending.begin(); it != pending.end();) {
      int flag = 0;
      if (wait) {
        DTS_MPI_CHECK(MPI_Wait(&it->req, MPI_STATUS_IGNORE));
        flag = 1;
      } else {
        DTS_MPI_CHECK(MPI_Test(&it->req, &flag, MPI_STATUS_IGNORE));
      }
      if (!flag) {
        ++it;
        continue;
      }
      if (root) done.emplace_back(it->key, std::move(it->sum));
      it = pending.erase(it);
    }
    return done;
  }
};

VectorSums::VectorSums(bool member) : state_(std::make_unique<State>()) {
  DTS_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, 0, &state_->comm));
  if (state_->comm == MPI_COMM_NULL) return;
  DTS_MPI_CHECK(MPI_Comm_set_errhandler(state_->comm, MPI_ERRORS_RETURN));
  int r = 0;
  DTS_MPI_CHECK(MPI_Comm_rank(state_->comm, &r));
  state_->root = r == 0;  // split with key 0 keeps the world order: the lowest world rank is 0
}

VectorSums::~VectorSums() {
  if (state_->comm == MPI_COMM_NULL) return;
  if (!state_->pending.empty()) {
    try {
      state_->collect(true);  // MPI may still write the buffers
    } catch (const CommError&) {
    }
  }
  MPI_Comm_free(&state_->comm);
}

bool VectorSums::root() const { return state_->root; }

void VectorSums::start(std::int64_t key, std::vector<double> mine) {
  DTS_ASSERT(state_->comm != MPI_COMM_NULL, "VectorSums::start on a rank that is not a member");
  DTS_ASSERT(mine.size() <= static_cast<std::size_t>(INT_MAX), "VectorSums: a vector of over 2^31 doubles");
  State::Pending& p = state_->pending.emplace_back();
  p.key = key;
  p.mine = std::move(mine);
  if (state_->root) p.sum.resize(p.mine.size());
  DTS_MPI_CHECK(MPI_Ireduce(p.mine.data(), state_->root ? p.sum.data() : nullptr, static_cast<int>(p.mine.size()),
                            MPI_DOUBLE, MPI_SUM, 0, state_->comm, &p.req));
}

std::vector<std::pair<std::int64_t, std::vector<double>>> VectorSums::poll() { return state_->collect(false); }

std::vector<std::pair<std::int64_t, std::vector<double>>> VectorSums::finish() { return state_->collect(true); }

}  // namespace dts::mpi
