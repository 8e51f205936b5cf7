// The Spark overhead keys (spark_overheads.hpp).
#include "algorithms/mpca/spark_overheads.hpp"

namespace dts::mpca {

SparkOverheads read_spark_overheads(ConfigReader& r, bool prepare) {
  SparkOverheads o;
  o.job_launch_s = r.number("job_launch_s", 0.0, 0.0, 3600.0);
  if (prepare) o.prepare_s = r.number("prepare_s", 0.0, 0.0, 3600.0);
  o.collective_s_per_mib = r.number("collective_s_per_mib", 0.0, 0.0, 3600.0);
  o.broadcast_compress_Bps = r.number("broadcast_compress_Bps", 0.0, 0.0, 1e15);
  return o;
}

}  // namespace dts::mpca
