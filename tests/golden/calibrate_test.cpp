// `dtsim calibrate`: the Nelder-Mead fitter on functions with a known minimum, and end to end: a platform's link
// latency recovered from a figure that a run with a known latency produced; the fitted file records the fit and
// runs as a platform; bad calibration files and foreign output files are refused before anything runs.
#include <catch2/catch.hpp>
#include <cmath>

#include "experiments/calibrate/nelder_mead.hpp"
#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::slurp;
using dts::test::write_json;
using nlohmann::json;

TEST_CASE("nelder_mead finds a quadratic's minimum in the unit box, and a minimum outside it on the bound",
          "[golden]") {
  const auto bowl = [](double a, double b) {
    return [a, b](const std::vector<double>& x) {
      return std::pow(x[0] - a, 2) + 10 * std::pow(x[1] - b, 2) + 0.5 * (x[0] - a) * (x[1] - b);
    };
  };
  const dts::exp::SimplexResult in = dts::exp::nelder_mead(bowl(0.3, 0.7), {0.9, 0.1});
  REQUIRE(in.converged);
  CHECK(in.x[0] == Approx(0.3).margin(1e-3));
  CHECK(in.x[1] == Approx(0.7).margin(1e-3));
  CHECK(in.evaluations <= 200);
  const dts::exp::SimplexResult edge = dts::exp::nelder_mead(bowl(1.4, 0.5), {0.2, 0.2});
  CHECK(edge.x[0] == Approx(1.0).margin(1e-3));  // clamped: f never sees a point outside the box
  CHECK(edge.x[1] == Approx(0.5 - 0.5 * (1.0 - 1.4) / 20).margin(2e-3));
  dts::exp::SimplexOptions few;
  few.max_evaluations = 10;
  const dts::exp::SimplexResult cut = dts::exp::nelder_mead(bowl(0.3, 0.7), {0.9, 0.1}, few);
  CHECK_FALSE(cut.converged);
  CHECK(cut.evaluations <= 10);
}

namespace {

// A 4-worker allreduce on a star whose link latency is to be fitted; modeled numerics.
void write_files(const TempDir& tmp) {
  write_json(tmp / "plat.json", {{"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}},
                                 {"link_bandwidth_bps", 1e9},
                                 {"link_latency_s", 1e-4}});
  json truth = json::parse(slurp(tmp / "plat.json"));
  truth["link_latency_s"] = 7e-4;
  write_json(tmp / "truth.json", truth);
  json exp = dts::test::tiny_experiment();
  exp["platform"] = "plat.json";
  exp["model"]["numerics"] = "modeled";
  exp["data"]["modeled"] = true;
  exp["run"] = {{"steps", 20}, {"eval_every_steps", 0}, {"log_every_steps", 10}};
  write_json(tmp / "exp.json", exp);
}

json calibration(double target) {
  return {{"name", "latency"},
          {"platform", "plat.json"},
          {"parameters", {{{"key", "/link_latency_s"}, {"min", 1e-6}, {"max", 1e-2}, {"start", 1e-5}}}},
          {"fixed", {{"/sharing", "split_duplex"}}},
          {"targets",
           {{{"name", "time"},
             {"experiment", "exp.json"},
             {"variant", "allreduce_sgd"},
             {"figure", "/simulated_time_s"},
             {"value", target},
             {"source", "a run on truth.json"}}}}};
}

double simulated_time(const TempDir& tmp, const std::string& platform, const std::string& out) {
  const auto r = run_dtsim("run " + (tmp / "exp.json").string() + " --out " + (tmp / out).string() +
                               " --set platform=" + (tmp / platform).string(),
                           tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(slurp(tmp / out / "allreduce_sgd" / "summary.json"))["simulated_time_s"].get<double>();
}

}  // namespace

TEST_CASE("dtsim calibrate recovers a link latency from the run it produced, and records the fit", "[golden]") {
  TempDir tmp;
  write_files(tmp);
  const double target = simulated_time(tmp, "truth.json", "truth");
  REQUIRE(simulated_time(tmp, "plat.json", "start") != Approx(target));  // the start is off
  write_json(tmp / "cal.json", calibration(target));
  const std::string out = (tmp / "fitted.json").string();
  const auto r = run_dtsim(
      "calibrate " + (tmp / "cal.json").string() + " --out " + out + " --keep-runs " + (tmp / "runs").string(),
      tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("[calibrate latency] evaluation 1/150"));
  const json fitted = json::parse(slurp(out));
  CHECK(fitted["base"] == "plat.json");        // a patch over the platform it was fitted from
  CHECK(fitted["sharing"] == "split_duplex");  // fixed, not fitted
  CHECK(fitted["calibration"]["fixed"]["/sharing"] == "split_duplex");
  CHECK(fitted["link_latency_s"].get<double>() == Approx(7e-4).epsilon(2e-3));
  const json& rec = fitted["calibration"];
  CHECK(rec["by"] == "dtsim calibrate");
  CHECK(rec["converged"] == true);
  CHECK(rec["parameters"][0]["fitted"] == fitted["link_latency_s"]);
  CHECK(std::abs(rec["targets"][0]["error"].get<double>()) < 1e-3);
  // The fitted file is a platform: a run on it gives the recorded figure, bit for bit.
  CHECK(simulated_time(tmp, "fitted.json", "check") == rec["targets"][0]["fitted_figure"].get<double>());
  CHECK(fs::exists(tmp / "runs" / "e0001" / "run0" / "allreduce_sgd" / "summary.json"));

  // It replaces its own file only with --force; the same inputs give the same file.
  const std::string first = slurp(out);
  const auto again = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out, tmp / "");
  CHECK(again.code == 2);
  CHECK_THAT(again.err, Contains("--force"));
  const auto forced = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out + " --force", tmp / "");
  INFO(forced.err);
  REQUIRE(forced.code == 0);
  CHECK(slurp(out) == first);
}

TEST_CASE("dtsim calibrate fits a number inside an array of the platform, keeping the rest of the array", "[golden]") {
  TempDir tmp;
  write_files(tmp);
  json plat = json::parse(slurp(tmp / "plat.json"));
  plat["message_overhead"] = {{"send", {{0, 1e-5, 0}, {1e9, 2e-3, 0}}}};
  write_json(tmp / "plat.json", plat);
  plat["message_overhead"]["send"][0][1] = 4e-4;
  write_json(tmp / "truth.json", plat);
  const double target = simulated_time(tmp, "truth.json", "truth");
  REQUIRE(simulated_time(tmp, "plat.json", "start") != Approx(target));
  json c = calibration(target);
  c["parameters"] = {{{"key", "/message_overhead/send/0/1"}, {"min", 1e-6}, {"max", 1e-2}, {"start", 1e-5}}};
  write_json(tmp / "cal.json", c);
  const std::string out = (tmp / "fitted.json").string();
  const auto r = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out, tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);  // without array pointers: exit 2, "/message_overhead/send is not an object"
  const json fitted = json::parse(slurp(out));
  const json& send = fitted["message_overhead"]["send"];
  REQUIRE(send.size() == 2);  // the whole array: a merge patch replaces arrays
  CHECK(send[0][0] == 0);
  CHECK(send[0][1].get<double>() == Approx(4e-4).epsilon(2e-3));
  CHECK(send[1] == json::array({1e9, 2e-3, 0}));
  CHECK(simulated_time(tmp, "fitted.json", "check") ==
        fitted["calibration"]["targets"][0]["fitted_figure"].get<double>());
  c["parameters"][0]["key"] = "/message_overhead/send/2/1";
  write_json(tmp / "cal.json", c);
  const auto past = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out + "x", tmp / "");
  CHECK(past.code == 2);
  CHECK_THAT(past.err, Contains("/message_overhead/send is an array of 2 in the platform file"));
  c["parameters"][0]["key"] = "/message_overhead/recv/0/1";
  write_json(tmp / "cal.json", c);
  const auto absent = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out + "x", tmp / "");
  CHECK(absent.code == 2);
  CHECK_THAT(absent.err, Contains("needs the array in the platform file itself"));
}

TEST_CASE("dtsim calibrate refuses bad calibration files and foreign outputs, writing nothing", "[golden]") {
  TempDir tmp;
  write_files(tmp);
  std::ofstream(tmp / "notes.json") << "{\"mine\": true}\n";
  const auto refused = [&](const json& cal, const std::string& args, const std::string& message) {
    write_json(tmp / "cal.json", cal);
    const auto r = run_dtsim("calibrate " + (tmp / "cal.json").string() + " " + args, tmp / "");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(message));
    CHECK_FALSE(fs::exists(tmp / "fitted.json"));
  };
  const std::string out = "--out " + (tmp / "fitted.json").string();
  json c = calibration(1.0);
  refused(c, "", "--out: name the fitted platform file");
  refused(c, "--force --out " + (tmp / "notes.json").string(), "dtsim calibrate did not write it");
  CHECK(slurp(tmp / "notes.json") == "{\"mine\": true}\n");
  c["parameters"][0]["key"] = "/device";
  refused(c, out, "cal.json:/parameters/0/key: /device is not a number in the platform file");
  c = calibration(1.0);
  c["parameters"][0]["key"] = "/device/peak_flops/x";
  refused(c, out, "/device/peak_flops is not an object");
  c = calibration(1.0);
  c["fixed"] = {{"/link_latency_s", 1}};
  refused(c, out, "cal.json:/parameters/0/key: \"/link_latency_s\" is also a fixed value");
  c = calibration(1.0);
  c["parameters"][0]["max"] = 1e-6;
  refused(c, out, "cal.json:/parameters/0/max: must be greater than min");
  c = calibration(1.0);
  c["targets"][0]["variant"] = "ring";
  refused(c, out, "cal.json:/targets/0/variant: the experiment has no variant \"ring\"");
  c = calibration(1.0);
  c["targets"][0]["figure"] = "/no_such_figure";
  refused(c, out, "cal.json:/targets/0/figure: the run's summary.json has no number at /no_such_figure");
  c = calibration(1.0);
  c["targets"][0]["set"] = {{"algorithm.workers", 0}};
  refused(c, out, "cal.json:/targets/0: the run of target time");
  c = calibration(1.0);
  c["targets"][0]["set"] = {{"platform.link_latency_s", 1}};
  refused(c, out, "calibrate sets the platform and the variant itself");
}

TEST_CASE("dtsim calibrate stopped by SIGTERM removes its runs and writes nothing", "[golden]") {
  TempDir tmp;
  write_files(tmp);
  json c = calibration(1.0);
  c["targets"][0]["set"] = {{"run.steps", 5000}};  // a few evaluations at most before the signal
  c["fit"] = {{"max_evaluations", 100000}, {"tolerance", 1e-9}};
  write_json(tmp / "cal.json", c);
  fs::create_directories(tmp / "scratch");
  const std::string out = (tmp / "fitted.json").string();
  const auto r = run_dtsim("calibrate " + (tmp / "cal.json").string() + " --out " + out, tmp / "",
                           "TMPDIR=" + (tmp / "scratch").string() + " timeout --preserve-status -s TERM 2 ");
  INFO(r.err);
  CHECK(r.code == 130);
  CHECK_THAT(r.err, Contains("interrupted: nothing written"));
  CHECK_FALSE(fs::exists(out));
  CHECK(fs::is_empty(tmp / "scratch"));  // the evaluations' runs are gone
}
