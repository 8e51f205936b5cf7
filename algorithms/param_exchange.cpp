// ParamExchange: a vector as one message or as one message per layer block, point to point or in trees.
#include "algorithms/param_exchange.hpp"

#include "algorithms/collectives/collectives.hpp"

namespace dts {

bool Transfer::test() {
  for (auto& p : pieces_) {
    if (p.valid() && !p.test()) return false;
  }
  return true;
}

Status Transfer::wait() {
  Status first = Status::kOk;
  for (auto& p : pieces_) {
    if (!p.valid()) continue;
    const Status s = p.wait();
    if (first == Status::kOk) first = s;
  }
  return first;
}

void Transfer::wait_ok() {
  for (auto& p : pieces_) {
    if (p.valid()) p.wait_ok();
  }
}

ParamExchange::ParamExchange(const Compute& compute, bool packed) {
  const std::size_t n = compute.num_params();
  if (packed) {
    pieces_.push_back({0, n});
    return;
  }
  std::size_t next = 0;
  for (const auto& b : compute.param_blocks()) {
    DTS_ASSERT(b.offset == next, "param_blocks must tile the parameter vector in order");
    if (b.size > 0) pieces_.push_back({b.offset, b.size});
    next = b.offset + b.size;
  }
  DTS_ASSERT(next == n, "param_blocks must cover the parameter vector");
  if (pieces_.empty()) pieces_.push_back({0, n});
}

Transfer ParamExchange::isend(Comm& comm, Rank dst, Tag tag, ConstSlice v, const SendOptions& opts) const {
  std::vector<Request> reqs;
  for (const auto& p : pieces_) reqs.push_back(comm.isend(dst, tag, v.sub(p.offset, p.count), opts));
  return Transfer(std::move(reqs));
}

Transfer ParamExchange::irecv(Comm& comm, Rank src, Tag tag, Slice v) const {
  std::vector<Request> reqs;
  for (const auto& p : pieces_) reqs.push_back(comm.irecv(src, tag, v.sub(p.offset, p.count)));
  return Transfer(std::move(reqs));
}

Request ParamExchange::irecv_first(Comm& comm, std::span<const Rank> srcs, Tag tag, Slice v) const {
  return comm.irecv_any(srcs, tag, v.sub(pieces_[0].offset, pieces_[0].count));
}

Transfer ParamExchange::irecv_rest(Comm& comm, Rank src, Tag tag, Slice v) const {
  std::vector<Request> reqs;
  for (std::size_t i = 1; i < pieces_.size(); ++i) {
    reqs.push_back(comm.irecv(src, tag, v.sub(pieces_[i].offset, pieces_[i].count)));
  }
  return Transfer(std::move(reqs));
}

void ParamExchange::tree_broadcast(Comm& comm, const Group& group, Slice v, int root, Tag tag) const {
  for (const auto& p : pieces_) collectives::tree_broadcast(comm, group, v.sub(p.offset, p.count), root, tag);
}

void ParamExchange::tree_reduce(Comm& comm, Compute& compute, const Group& group, Slice v, int root, Tag tag) const {
  for (const auto& p : pieces_) collectives::tree_reduce(comm, compute, group, v.sub(p.offset, p.count), root, tag);
}

bool read_packed(ConfigReader& r) { return r.boolean("packed", true); }

}  // namespace dts
