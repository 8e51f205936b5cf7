// dtsim: the command line. main() is the single error boundary (STYLE.md §8): bad input exits 2 with a
// message naming the file and key, other failures exit 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "experiments/bench/bench.hpp"
#include "experiments/list.hpp"
#ifdef DTS_WITH_SIM
#include "experiments/step_times.hpp"
#endif
#include "experiments/runner/run.hpp"
#ifdef DTS_WITH_SIM
#include "experiments/calibrate/calibrate_run.hpp"
#include "experiments/runner_sim/sim_input.hpp"
#include "experiments/sweep/sweep_run.hpp"
#endif

namespace {

// --hang-timeout: seconds, in (0, 1e7]. (CLI::PositiveNumber prints its range as 0 to 1.8e308.)
std::string hang_timeout_check(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0 && v <= 1e7)) {
    return "expected a number of seconds in (0, 1e7], got " + dts::echo(text);
  }
  return "";
}

// SimGrid's own --cfg=... and --log=..., passed through `cmd` to every engine it starts; any other extra
// argument is an input error (false, after the message).
bool take_simgrid_args(const CLI::App& cmd, std::vector<std::string>& out) {
  for (const auto& extra : cmd.remaining()) {
    if (extra.rfind("--cfg=", 0) != 0 && extra.rfind("--log=", 0) != 0) {
      std::cerr << "input error: unknown argument " << dts::echo(extra) << '\n';
      return false;
    }
    out.push_back(extra);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dtsim: simulate and run distributed training algorithms"};
  app.require_subcommand(1);

  dts::exp::RunOptions run;
#ifdef DTS_WITH_SIM
  run.simulator = &dts::exp::sim_reader();  // --backend mpi reads the platform as the simulator does
#endif
  CLI::App* run_cmd = app.add_subcommand("run", "run an experiment on the simulator");
  run_cmd->add_option("experiment", run.experiment_file, "experiment JSON file")->required();
  run_cmd->add_option("--out", run.out_dir, "result directory (default: results/<experiment name>)");
  run_cmd->add_flag("--force", run.force,
                    "replace the --out directory if it holds a dtsim result (never any other directory)");
  run_cmd->add_option("--set", run.sets,
                      "override a key: --set algorithm.workers=4 (repeatable); applied to the file, then again to "
                      "each variant, so it beats the variant's own value");
  run_cmd->add_option("--backend", run.backend, "sim (default), or mpi: real processes, under mpirun -np RANKS")
      ->check(CLI::IsMember({"sim", "mpi"}));
  run_cmd
      ->add_option("--hang-timeout", run.hang_timeout_s,
                   "mpi: seconds a rank waits for a peer with no progress before it ends the job (default 300)")
      ->check(hang_timeout_check);
  run_cmd->add_flag("--check", run.check_only,
                    "read and validate the experiment and every variant (platform, data, capacity), run nothing");
  run_cmd->allow_extras();  // SimGrid's own --cfg=... and --log=... pass through
  run_cmd->footer(
      "SimGrid options (simulator only), passed through to each variant's engine:\n"
      "  --cfg=KEY:VALUE   a SimGrid configuration key; it beats the platform's own value of KEY (network/model,\n"
      "                    simgrid_config) and is recorded in config.resolved.json (\"simgrid_args\").\n"
      "                    --cfg=tracing:yes writes SimGrid's Paje trace to each variant's result directory\n"
      "                    (simgrid.trace).\n"
      "  --log=CATEGORY.thres:LEVEL   SimGrid's logging");

#ifdef DTS_WITH_SIM
  dts::exp::SweepOptions sweep;
  CLI::App* sweep_cmd =
      app.add_subcommand("sweep", "run an experiment at every point of a grid or list (a sweep file)");
  sweep_cmd->add_option("sweep", sweep.file, "sweep JSON file")->required();
  sweep_cmd->add_option("--out", sweep.out, "the sweep's directory (default: results/<sweep name>)");
  sweep_cmd->add_option("--jobs,-j", sweep.jobs, "points run at once (default 1)")->check(CLI::Range(1, 1024));
  sweep_cmd->add_flag("--force", sweep.force, "start over a directory that holds a different sweep");
  sweep_cmd->add_option("--shard", sweep.shard, "K/N: run points K, K+N, K+2N... only (e.g. a Slurm array task)");
  sweep_cmd->add_flag("--collate", sweep.collate, "write the table of a finished sweep (after --shard runs)");
  sweep_cmd->add_flag("--check", sweep.check, "read the sweep and check every point's experiment, run nothing");
  sweep_cmd->allow_extras();  // --cfg=... / --log=... for every point

  dts::exp::CalibrateOptions calibrate;
  CLI::App* calibrate_cmd =
      app.add_subcommand("calibrate", "fit a platform's free parameters to calibration targets (a calibration file)");
  calibrate_cmd->add_option("calibration", calibrate.file, "calibration JSON file")->required();
  calibrate_cmd->add_option("--out", calibrate.out, "the fitted platform file (default: the file's output key)");
  calibrate_cmd->add_flag("--force", calibrate.force, "replace --out if dtsim calibrate wrote it (never another file)");
  calibrate_cmd->add_option("--keep-runs", calibrate.keep_runs, "a new directory to keep every evaluation's runs in");
  calibrate_cmd->add_flag("--check", calibrate.check, "read the file and check every target's run, fit nothing");
  calibrate_cmd->allow_extras();  // --cfg=... / --log=... for every run
#endif
  CLI::App* list_cmd = app.add_subcommand("list", "list algorithms, models, data sets, platforms and devices");
#ifdef DTS_WITH_SIM
  dts::exp::StepTimeQuery step_time;
  list_cmd->add_option("--model", step_time.model,
                       "instead: the device model's forward-backward time of this model on every catalog device");
  list_cmd->add_option("--batch", step_time.batch, "with --model: samples per step (default 32)")
      ->check(CLI::Range(1, 1 << 20));
  list_cmd->add_option("--classes", step_time.classes, "with --model: classes of a kernels network (default 10)")
      ->check(CLI::Range(1, 1 << 20));
#endif

  CLI::App* bench_cmd = app.add_subcommand("bench", "print benchmark figures (median, min and max of several runs)");
  bench_cmd->require_subcommand(1);
  const std::vector<dts::bench::Command> benches = dts::bench::add_bench_commands(*bench_cmd);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*list_cmd) {
#ifdef DTS_WITH_SIM
      if (!step_time.model.empty()) {
        dts::exp::print_step_times(DTS_SOURCE_DIR, step_time);
        return 0;
      }
#endif
      dts::exp::list_catalog(DTS_SOURCE_DIR);
      return 0;
    }
    for (const auto& b : benches) {
      if (*b.app) return b.run();
    }
#ifdef DTS_WITH_SIM
    if (*sweep_cmd) return take_simgrid_args(*sweep_cmd, sweep.simgrid_args) ? dts::exp::run_sweep(sweep) : 2;
    if (*calibrate_cmd) {
      return take_simgrid_args(*calibrate_cmd, calibrate.simgrid_args) ? dts::exp::run_calibration(calibrate) : 2;
    }
#endif
    if (!take_simgrid_args(*run_cmd, run.simgrid_args)) return 2;
    for (const auto& extra : run.simgrid_args) {
      if (extra.rfind("--cfg=tracing/filename", 0) == 0) {
        std::cerr << "input error: " << dts::echo(extra)
                  << ": dtsim writes the trace into each variant's result directory (simgrid.trace)\n";
        return 2;
      }
    }
    return run.backend == "mpi" ? dts::exp::run_experiment_mpi(run) : dts::exp::run_experiment(run);
  } catch (const dts::InputError& e) {
    std::cerr << "input error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
}
