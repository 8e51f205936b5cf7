// MPCA SGD (papers/mpca_sgd.md §4): a driver on rank 0 and K workers on ranks 1..K (`workers` = K, K + 1 ranks,
// as the EASGD center). The model is split into S shards (shard_layout.hpp: equal float counts, or at layers). Driver
// cycles reduce, prepare and broadcast shards (pipeline.hpp); every worker trains without pause and is pulled
// toward the latest broadcast shards at every step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "algorithms/algorithm.hpp"
#include "algorithms/mpca/checkpoint.hpp"
#include "algorithms/mpca/pipeline.hpp"
#include "algorithms/mpca/shard_layout.hpp"
#include "algorithms/mpca/spark_overheads.hpp"

namespace dts::mpca {

constexpr Rank kDriver = 0;

struct Config {
  int shards = 3, phases = 3;
  Split split = Split::kEven;
  bool weighted = true;                 // Eq. 9 (else the workers' plain mean)
  std::size_t chunk_floats = 1u << 20;  // the broadcast's chunks (spark.broadcast.blockSize, 4 MiB)
  bool reserve = true;                  // workers re-serve the chunks they hold
  double delta = 0.8;                   // Eq. 4
  bool displace = true;                 // Eq. 7 (else Eq. 6, the penalty's gradient)
  Schedules schedules;
  SparkOverheads spark;
  CheckpointConfig checkpoint;
  std::shared_ptr<Backup> backup = std::make_shared<Backup>();  // the storage, shared by the run's ranks
};

// The driver's job message to each worker at the start of a cycle (Spark's job with the broadcast id).
// Its first float: 0, kStop or kRestore, plus kRegroup when workers were lost (the new membership follows as a
// second message). kRestore: the driver restarted, and the whole model it restarted from follows as a broadcast.
struct Job {
  static constexpr float kStop = 1, kRestore = 2, kRegroup = 4;
  bool stop = false, restore = false;
  int reduce = -1, broadcast = -1;  // shards; -1: none
  float alpha = 0;
  static constexpr std::size_t kFloats = 4;
};

// The run's shards on this rank's model.
ShardLayout shard_layout(const Compute& compute, const Config& cfg);

void driver(Context& ctx, const Config& cfg);
void worker(Context& ctx, const Config& cfg);

}  // namespace dts::mpca
