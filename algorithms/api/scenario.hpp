// What a scenario does to a run (the experiment's `scenario` section, README "Scenarios"): compute
// stragglers in time windows, seeded per-step jitter, degraded or downed links, failed ranks, joins and
// leaves. One description for both backends: the simulator charges `stretch()` of its modeled compute time,
// the MPI backend sleeps the difference between `stretch()` of its measured compute time and that time.
// Ranks are resolved when the scenario is read (a fraction of the workers is drawn from the seed).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/api/request.hpp"

namespace dts {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

// The listed ranks compute `factor` times slower during [from_s, until_s).
struct Straggler {
  std::vector<Rank> ranks;
  double factor = 1;
  double from_s = 0, until_s = kNever;
};

// Each step of the listed ranks is slowed by a factor drawn from (seed, rank, step): lognormal with median 1
// (exp(sigma z), z standard normal), or two-point (`factor` with probability `probability`, else 1).
struct Jitter {
  enum class Model : std::uint8_t { kLognormal, kTwoPoint };
  std::vector<Rank> ranks;
  Model model = Model::kLognormal;
  double sigma = 0;
  double probability = 0, factor = 1;
};

// Links scaled by name, or the links private to a rank's host (its NIC), during [from_s, until_s) (default: the
// whole run); `down`: the links carry nothing during the window (the flows crossing them pause, and resume at
// until_s). On the simulator only (sim/link_windows.hpp).
struct LinkChange {
  std::vector<std::string> links;
  std::vector<Rank> nic_of;
  double bandwidth_factor = 1, latency_factor = 1;
  double from_s = 0, until_s = kNever;
  bool down = false;

  // Whether the change has edges after the start: a window, or down.
  bool windowed() const { return from_s > 0 || until_s != kNever || down; }
};

// A rank that crashes at at_s, or that joins (starts) or leaves (ends cleanly) at at_s.
struct RankEvent {
  Rank rank = -1;
  double at_s = 0;
};

// A rank that crashes at at_s and is back restart_after_s later (a failure with `restart_after_s`), for the
// algorithms that recover it (AlgorithmSpec::restarts): the algorithm models the crash, losing what the rank
// held in memory, at its next safe point after at_s (Context::crash_at_s); the world does not fail the rank.
struct Restart {
  Rank rank = -1;
  double at_s = 0, restart_after_s = 0;
};

struct Scenario {
  std::string where;  // the section's place in its file ("exp.json:/scenario"), for messages
  std::uint64_t seed = 0;
  std::vector<Straggler> stragglers;
  std::vector<Jitter> jitter;
  std::vector<LinkChange> links;
  std::vector<RankEvent> failures, joins, leaves;
  std::vector<Restart> restarts;  // the failures with restart_after_s (not in `failures`)

  bool empty() const {
    return stragglers.empty() && jitter.empty() && links.empty() && failures.empty() && joins.empty() &&
           leaves.empty() && restarts.empty();
  }
  // Whether rank r's compute is ever slowed (a straggler or jitter names it).
  bool slows(Rank r) const;
  // Whether a link change has edges after the start (LinkChange::windowed).
  bool has_link_windows() const;
  // How long compute of `seconds` at full speed takes on rank r when it begins at start_s, in r's step `step`
  // (the count of its forward-backward passes before this one): the straggler windows it crosses, each at its
  // own factor, times the step's jitter.
  double stretch(Rank r, std::int64_t step, double start_s, double seconds) const;
  // The jitter factor of rank r's step `step` (1 when no jitter names r).
  double jitter_factor(Rank r, std::int64_t step) const;
};

// The ranks of `fraction` of the workers (ranks first_worker .. first_worker + workers - 1, rounded to the
// nearest count), drawn without replacement from `seed`, in ascending order.
std::vector<Rank> draw_ranks(double fraction, int workers, Rank first_worker, std::uint64_t seed);

}  // namespace dts
