// The simulator's part of an experiment, kept unread.
#include "experiments/runner/simulator_input.hpp"

namespace dts::exp {
namespace {

class UnreadPart final : public SimulatorPart {
 public:
  explicit UnreadPart(nlohmann::json given) : given_(std::move(given)) {}
  const nlohmann::json& resolved_platform() const override { return given_; }

 private:
  nlohmann::json given_;
};

class UnreadSimulator final : public SimulatorReader {
 public:
  std::shared_ptr<SimulatorPart> read_platform_file(const std::string& platform_file) const override {
    return std::make_shared<UnreadPart>(platform_file);
  }
  std::shared_ptr<SimulatorPart> read_platform(const nlohmann::json& section, const std::string& file,
                                               const std::string& /*base_dir*/) const override {
    const ConfigReader object(section, file, "/platform");  // throws unless an object, as the simulator's reader
    return std::make_shared<UnreadPart>(section);
  }
  void check_capacity(const SimulatorPart& /*part*/, double /*weight_bytes*/, double /*data_bytes*/) const override {}
  void read_run(ConfigReader& run, SimulatorPart& /*part*/) const override {
    for (const char* key : kSimulatorRunKeys) {
      if (run.has(key)) run.raw(key);
    }
  }
};

}  // namespace

const SimulatorReader& unread_simulator() {
  static const UnreadSimulator reader;
  return reader;
}

}  // namespace dts::exp
