// The driver pipeline's schedule and the hyper-parameter schedules (pipeline.hpp).
#include "algorithms/mpca/pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"

namespace dts::mpca {

Cycle cycle_of(int phases, int shards, std::int64_t c) {
  DTS_ASSERT(phases >= 1 && phases <= 3 && shards >= phases, "mpca: phases need as many shards");
  const auto shard = [shards](std::int64_t k) { return static_cast<int>(k % shards); };
  Cycle cy;
  cy.reduce = shard(c);
  if (phases == 3) {
    if (c >= 1) cy.prepare = shard(c - 1);
    if (c >= 2) cy.broadcast = shard(c - 2);
  } else if (phases == 2) {
    cy.order = Cycle::Order::kPrepareFirst;
    if (c >= 1) cy.prepare = cy.broadcast = shard(c - 1);
  } else {
    cy.order = Cycle::Order::kInTurn;
    cy.prepare = cy.broadcast = cy.reduce;
  }
  return cy;
}

void PhaseBook::begin(int shard) {
  int& b = busy_.at(static_cast<std::size_t>(shard));
  if (b > 0) ++overlaps_;
  ++b;
}

void PhaseBook::end(int shard) { --busy_.at(static_cast<std::size_t>(shard)); }

double Schedules::beta_at(std::int64_t c) const {
  if (beta_ramp_cycles <= 0 || beta >= 1) return beta;
  return std::max(beta, std::pow(beta, static_cast<double>(c) / static_cast<double>(beta_ramp_cycles)));
}

double Schedules::alpha_at(std::int64_t c) const {
  double k = static_cast<double>(c) / shards - alpha_zero_rounds;  // rounds into the schedule
  if (k < 0) return 0;
  if ((k -= alpha_high_rounds) < 0) return alpha_high;
  if (k >= alpha_decay_rounds) return alpha;
  const double f = k / alpha_decay_rounds;
  if (alpha_high <= 0 || alpha <= 0) return alpha_high + (alpha - alpha_high) * f;  // no exponential through 0
  return alpha_high * std::pow(alpha / alpha_high, f);
}

double Schedules::gamma_at(std::int64_t c) const {
  if (gamma_ramp_cycles <= 0) return gamma;
  return gamma * std::min(1.0, static_cast<double>(c) / static_cast<double>(gamma_ramp_cycles));
}

}  // namespace dts::mpca
