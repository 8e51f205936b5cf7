// TagCodec: the envelope's tag and round in an MPI tag, with the limits said when they are crossed.
#include "realexec/tag_codec.hpp"

#include <string>

#include "core/errors.hpp"

namespace dts::mpi {

TagCodec::TagCodec(int tag_ub) : tag_ub_(tag_ub), max_round_(0) {
  DTS_ASSERT(tag_ub >= kTags - 1, "MPI_TAG_UB below 4095; MPI promises at least 32767");
  max_round_ = static_cast<Round>((tag_ub - (kTags - 1)) / kTags);
}

int TagCodec::encode(Tag tag, Round round) const {
  if (tag < 0 || tag >= kTags || round > max_round_) {
    throw CommError("a message with tag " + std::to_string(tag) + " and round " + std::to_string(round) +
                    " does not fit in an MPI tag: with MPI_TAG_UB = " + std::to_string(tag_ub_) +
                    " here, the MPI backend carries tags 0-" + std::to_string(kTags - 1) + " and rounds 0-" +
                    std::to_string(max_round_) + " (realexec/tag_codec.hpp)");
  }
  return static_cast<int>(round) * kTags + tag;
}

std::pair<Tag, Round> TagCodec::decode(int mpi_tag) const {
  return {mpi_tag % kTags, static_cast<Round>(mpi_tag / kTags)};
}

}  // namespace dts::mpi
