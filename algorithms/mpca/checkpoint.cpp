// The driver's backups (checkpoint.hpp).
#include "algorithms/mpca/checkpoint.hpp"

#include <utility>

namespace dts::mpca {

CheckpointConfig read_checkpoint(ConfigReader& r) {
  CheckpointConfig c;
  c.every_cycles = r.integer("checkpoint_every", 0, 0, 1'000'000'000);
  c.fixed_s = r.number("checkpoint_s", 0.05, 0.0, 3600.0);
  c.bytes_per_s = r.number("checkpoint_bytes_per_s", 100e6, 1e3, 1e13);
  return c;
}

void Checkpointer::after_cycle(std::int64_t cycle, ConstSlice joint) {
  if (cfg_.every_cycles == 0 || (cycle + 1) % cfg_.every_cycles != 0) return;
  if (busy_) {  // the last backup is still being written
    ++skipped_;
    return;
  }
  if (write_) write_->join();
  writing_ = Backup{.valid = true, .cycle = cycle + 1, .taken_s = ctx_.comm.now_s(), .joint = {}};
  if (joint.real()) writing_.joint.assign(joint.data.begin(), joint.data.end());
  ctx_.compute.charge_elementwise(joint.count, 2);  // the snapshot, a host copy
  busy_ = true;
  const double seconds = cfg_.write_s(joint.count);
  write_ = ctx_.node.spawn("mpca-checkpoint", [this, seconds] {
    ctx_.node.sleep_for(seconds);
    busy_ = false;
    if (std::exchange(lost_, false)) return;
    *store_ = writing_;
    ++written_;
    ctx_.recorder.event(
        "checkpoint",
        {{"cycle", static_cast<double>(writing_.cycle)}, {"taken_s", writing_.taken_s}, {"write_s", seconds}});
  });
}

void Checkpointer::finish() {
  if (write_) write_->join();
  write_.reset();
  if (cfg_.every_cycles == 0) return;
  ctx_.recorder.count("mpca_checkpoints", written_);
  ctx_.recorder.count("mpca_checkpoints_skipped", skipped_);
}

}  // namespace dts::mpca
