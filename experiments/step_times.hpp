// `dtsim list --model NAME`: what the device model says one forward-backward of a model costs on each device of
// the catalog, and where the time goes (the roofline, the small-GEMM floors, the framework's host work).
#pragma once

#include <string>

namespace dts::exp {

struct StepTimeQuery {
  std::string model;
  int batch = 32;
  // The sample shape a kernels network is built for (zoo models keep their published one): 0 picks the
  // network's usual data set (3x32x32 for cifar-style networks, else 1x28x28), 10 classes.
  int channels = 0, height = 0, width = 0, classes = 10;
};

// Prints one row per catalog device of `source_dir`/platforms/devices.json. Throws dts::InputError on an
// unknown model or a shape it cannot take.
void print_step_times(const std::string& source_dir, const StepTimeQuery& q);

}  // namespace dts::exp
