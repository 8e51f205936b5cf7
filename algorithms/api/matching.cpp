// The one check of a matched pair that does not depend on the backend.
#include "algorithms/api/matching.hpp"

#include <string>

#include "core/errors.hpp"

namespace dts::matching {

void check_count(const Want& w, const Envelope& e) {
  DTS_ASSERT(w.count == e.count, "receive buffer of " + std::to_string(w.count) + " floats for a message of " +
                                     std::to_string(e.count) + " (tag " + std::to_string(e.tag) +
                                     (e.round == 0 ? "" : ", round " + std::to_string(e.round)) + ")");
}

}  // namespace dts::matching
