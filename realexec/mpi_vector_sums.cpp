// VectorSums: MPI_Ireduce on a communicator of the members, each sum's buffers kept until it completes. Each
// share carries one more double, 1 (0 for a share started by finish for a failed member): the sum's last
// element counts the shares, and a sum with fewer than the members' count is dropped.
#include "realexec/mpi_vector_sums.hpp"

#include <algorithm>
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
  MPI_Comm comm = MPI_COMM_NULL;   // the sums
  MPI_Comm agree = MPI_COMM_NULL;  // finish's agreement: a collective of its own, beside the pending sums
  bool root = false;
  int members = 0;
  std::list<Pending> pending;      // in start order; a list, so that buffers never move
  std::vector<std::int64_t> keys;  // every key started, in order
  std::size_t share_size = 0;      // the length of a share (with its count), once one was started

  void start(std::int64_t key, std::vector<double> mine) {
    DTS_ASSERT(mine.size() <= static_cast<std::size_t>(INT_MAX), "VectorSums: a vector of over 2^31 doubles");
    share_size = mine.size();
    keys.push_back(key);
    Pending& p = pending.emplace_back();
    p.key = key;
    p.mine = std::move(mine);
    if (root) p.sum.resize(p.mine.size());
    DTS_MPI_CHECK(MPI_Ireduce(p.mine.data(), root ? p.sum.data() : nullptr, static_cast<int>(p.mine.size()), MPI_DOUBLE,
                              MPI_SUM, 0, comm, &p.req));
  }

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
      if (root && it->sum.back() == static_cast<double>(members)) {  // every member's share
        it->sum.pop_back();
        done.emplace_back(it->key, std::move(it->sum));
      }
      it = pending.erase(it);
    }
    return done;
  }
};

VectorSums::VectorSums(bool member) : state_(std::make_unique<State>()) {
  DTS_MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, 0, &state_->comm));
  if (state_->comm == MPI_COMM_NULL) return;
  DTS_MPI_CHECK(MPI_Comm_set_errhandler(state_->comm, MPI_ERRORS_RETURN));
  DTS_MPI_CHECK(MPI_Comm_dup(state_->comm, &state_->agree));
  int r = 0;
  DTS_MPI_CHECK(MPI_Comm_rank(state_->comm, &r));
  DTS_MPI_CHECK(MPI_Comm_size(state_->comm, &state_->members));
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
  MPI_Comm_free(&state_->agree);
  MPI_Comm_free(&state_->comm);
}

bool VectorSums::root() const { return state_->root; }

void VectorSums::start(std::int64_t key, std::vector<double> mine) {
  DTS_ASSERT(state_->comm != MPI_COMM_NULL, "VectorSums::start on a rank that is not a member");
  mine.push_back(1);  // this share counts
  state_->start(key, std::move(mine));
}

std::vector<std::pair<std::int64_t, std::vector<double>>> VectorSums::poll() { return state_->collect(false); }

std::vector<std::pair<std::int64_t, std::vector<double>>> VectorSums::finish() {
  State& s = *state_;
  if (s.comm == MPI_COMM_NULL) return {};
  // The member that started the most keys (the lowest such: MAXLOC's tie rule) tells the others its keys and
  // the length of a share.
  struct {
    int count, member;
  } mine{static_cast<int>(s.keys.size()), 0}, most{0, 0};
  DTS_MPI_CHECK(MPI_Comm_rank(s.agree, &mine.member));
  DTS_MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_2INT, MPI_MAXLOC, s.agree));
  if (most.count > 0) {
    std::vector<std::int64_t> keys = s.keys;
    keys.resize(static_cast<std::size_t>(most.count));
    std::uint64_t share_size = s.share_size;
    DTS_MPI_CHECK(MPI_Bcast(keys.data(), most.count, MPI_INT64_T, most.member, s.agree));
    DTS_MPI_CHECK(MPI_Bcast(&share_size, 1, MPI_UINT64_T, most.member, s.agree));
    DTS_ASSERT(std::equal(s.keys.begin(), s.keys.end(), keys.begin()),
               "VectorSums: the members started different keys (not the first of the longest list)");
    for (std::size_t i = s.keys.size(); i < keys.size(); ++i)
      s.start(keys[i], std::vector<double>(share_size, 0.0));  // no share: its count is 0
  }
  return s.collect(true);
}

}  // namespace dts::mpi
