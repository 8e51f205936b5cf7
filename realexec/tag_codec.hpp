// How the MPI backend carries a message's envelope (tag and round, algorithms/api/matching.hpp) in the one
// integer MPI has for it: mpi_tag = round * 2^kTagBits + tag. MPI guarantees tags up to MPI_TAG_UB, at least
// 32767 (Open MPI and MPICH give 2^31 - 1): tags 0..4095, and rounds 0..(MPI_TAG_UB - 4095) / 4096, which
// is 0..524287 with 2^31 - 1 and only 0..7 with the minimum. A tag or round beyond that is refused with a
// CommError that names the limits; the simulator has none (its envelope is not an integer).
#pragma once

#include <utility>

#include "algorithms/api/request.hpp"

namespace dts::mpi {

class TagCodec {
 public:
  static constexpr int kTagBits = 12;
  static constexpr Tag kTags = Tag{1} << kTagBits;  // tags 0 .. kTags - 1
  // tag_ub: the communicator's MPI_TAG_UB.
  explicit TagCodec(int tag_ub);
  int encode(Tag tag, Round round) const;
  std::pair<Tag, Round> decode(int mpi_tag) const;
  Round max_round() const { return max_round_; }

 private:
  int tag_ub_;
  Round max_round_;
};

}  // namespace dts::mpi
