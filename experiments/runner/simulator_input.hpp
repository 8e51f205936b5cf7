// The simulator's part of an experiment: the "platform" section and run's simulator keys (kSimulatorRunKeys).
// The runner neither reads nor interprets it: the simulator backend does (experiments/runner_sim/sim_input.hpp),
// called by read_experiment where these keys come, so that errors come in the file's order and name its keys.
// A plan keeps what that reader made, opaque, for the same backend to run. A build without the simulator keeps
// the section as given, unread (unread_simulator()).
#pragma once

#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/config_reader.hpp"

namespace dts::exp {

// What a SimulatorReader read of one plan.
class SimulatorPart {
 public:
  virtual ~SimulatorPart() = default;
  // The platform as read, defaults filled in: config.resolved.json's "platform".
  virtual const nlohmann::json& resolved_platform() const = 0;
};

class SimulatorReader {
 public:
  virtual ~SimulatorReader() = default;
  // The "platform" value: a platform file (named by the experiment, resolved against its directory, and found
  // readable), or an inline object of the experiment `file`, whose relative paths resolve against `base_dir`.
  virtual std::shared_ptr<SimulatorPart> read_platform_file(const std::string& platform_file) const = 0;
  virtual std::shared_ptr<SimulatorPart> read_platform(const nlohmann::json& section, const std::string& file,
                                                       const std::string& base_dir) const = 0;
  // Once the model and the data are read: whether weights and training data fit the platform's memory.
  virtual void check_capacity(const SimulatorPart& part, double weight_bytes, double data_bytes) const = 0;
  // The run section's simulator keys.
  virtual void read_run(ConfigReader& run, SimulatorPart& part) const = 0;
};

// The run section's keys that belong to the simulator.
inline constexpr std::array<const char*, 4> kSimulatorRunKeys = {"fidelity", "ring_flow_budget", "ring_sample_steps",
                                                                 "trace"};

// For a build without the simulator: the platform kept as given (a file name, or an object), and the run's
// simulator keys accepted unread.
const SimulatorReader& unread_simulator();

}  // namespace dts::exp
