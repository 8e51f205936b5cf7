// What Spark adds to the time of MPCA SGD and of the SparkNet-style baseline (papers/mpca_sgd.md §6 item 4,
// §8): fixed per-operation costs, a per-byte cost of the collective path (serialisation, JVM and GPU<->host
// copies), and the driver's compression of each broadcast variable. Keys, default 0 (no overhead); experiments
// calibrate the first ones against §8's table.
#pragma once

#include <cstddef>

#include "core/config_reader.hpp"

namespace dts::mpca {

struct SparkOverheads {
  double job_launch_s = 0;          // the driver, before it launches a job (a cycle's, or a round's broadcast)
  double prepare_s = 0;             // mpca's driver, per preparation: chunk, register the broadcast
  double collective_s_per_mib = 0;  // a worker, per MiB it puts into a reduce, and per MiB it downloads
  // The driver compresses a broadcast variable at this many bytes per second before it goes out (Spark's
  // spark.broadcast.compress, one core); 0: not compressed.
  double broadcast_compress_Bps = 0;
  // Seconds a worker spends on `floats` of a collective.
  double collective_s(std::size_t floats) const {
    return collective_s_per_mib * static_cast<double>(floats) * 4.0 / (1024.0 * 1024.0);
  }
  // Seconds the driver spends compressing a broadcast of `floats`.
  double compress_s(std::size_t floats) const {
    return broadcast_compress_Bps > 0 ? static_cast<double>(floats) * 4.0 / broadcast_compress_Bps : 0.0;
  }
};

// Reads `job_launch_s`, `collective_s_per_mib`, `broadcast_compress_Bps` and, with `prepare`, `prepare_s`.
SparkOverheads read_spark_overheads(ConfigReader& r, bool prepare);

}  // namespace dts::mpca
