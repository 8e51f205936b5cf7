// The driver's periodic backup of the joint model (papers/mpca_sgd.md §4.9: a DumpModel objective evaluated
// asynchronously, to persistent storage). Every `checkpoint_every` driver cycles the driver snapshots x~ (one
// host copy of M floats, charged) and writes it in the background: `checkpoint_s` plus M bytes at
// `checkpoint_bytes_per_s` (a stated assumption: §4.9 and §6 give no figure; the default 100 MB/s is one local
// disk or an HDFS write pipeline at 1 GbE). The backup counts once its write has ended; a due backup while the
// last is still being written is skipped. The store outlives the driver rank (persistent storage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "core/config_reader.hpp"

namespace dts::mpca {

struct CheckpointConfig {
  std::int64_t every_cycles = 0;  // 0: no backups
  double fixed_s = 0.05;          // per backup: open, commit, the storage's latency
  double bytes_per_s = 100e6;
  double write_s(std::size_t floats) const { return fixed_s + static_cast<double>(floats) * 4.0 / bytes_per_s; }
};

// Reads `checkpoint_every`, `checkpoint_s` and `checkpoint_bytes_per_s`.
CheckpointConfig read_checkpoint(ConfigReader& r);

// The last backup written to storage.
struct Backup {
  bool valid = false;
  std::int64_t cycle = 0;    // the driver cycles done when it was taken
  double taken_s = 0;        // when the snapshot was taken
  std::vector<float> joint;  // x~ (empty in modeled numerics)
};

class Checkpointer {
 public:
  Checkpointer(Context& ctx, const CheckpointConfig& cfg, std::shared_ptr<Backup> store)
      : ctx_(ctx), cfg_(cfg), store_(std::move(store)) {}
  // After driver cycle `cycle` (0-based): a backup when one is due.
  void after_cycle(std::int64_t cycle, ConstSlice joint);
  // Waits for a write in flight and reports the counters.
  void finish();
  // The driver crashed: a backup being written is lost.
  void crash() { lost_ = busy_; }

 private:
  Context& ctx_;
  const CheckpointConfig& cfg_;
  std::shared_ptr<Backup> store_;
  Backup writing_;
  std::unique_ptr<Activity> write_;
  bool busy_ = false, lost_ = false;
  std::int64_t written_ = 0, skipped_ = 0;
};

}  // namespace dts::mpca
