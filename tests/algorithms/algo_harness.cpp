// run_quadratic(): a SimJob with QuadraticCompute ranks and a recorder that captures the final model.
#include "tests/algorithms/algo_harness.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include <simgrid/s4u.hpp>

#include "algorithms/algorithm.hpp"
#include "sim/launcher.hpp"
#include "tests/sim/sim_harness.hpp"
#include "tests/support/isolated.hpp"

namespace dts::test {
namespace {

class CaptureRecorder final : public Recorder {
 public:
  CaptureRecorder(Comm& comm, nlohmann::json& out) : comm_(comm), out_(out) {}
  void step(std::int64_t step, float) override {
    out_["steps"][static_cast<std::size_t>(comm_.rank())] = step;
    out_["last_step_s"][static_cast<std::size_t>(comm_.rank())] = comm_.now_s();
  }
  bool eval_due(std::int64_t step) const override { return step % 10 == 0; }
  void evaluate(std::int64_t step, ConstSlice params, bool final) override {
    out_["evals"] = out_.value("evals", 0) + 1;
    out_["eval_steps"].push_back(step);
    if (final) {
      out_["final"] = std::vector<float>(params.data.begin(), params.data.end());
      out_["final_step"] = step;
      out_["final_rank"] = comm_.rank();
    }
  }
  void observe(std::int64_t, ConstSlice params) override {  // the last one: each rank's model at its end
    out_["observed"][std::to_string(comm_.rank())] = std::vector<float>(params.data.begin(), params.data.end());
  }
  void evaluate_own(std::int64_t step, ConstSlice params) override {
    out_["own"][std::to_string(comm_.rank())] = std::vector<float>(params.data.begin(), params.data.end());
    out_["own_step"] = step;
  }
  void count(const std::string& name, std::int64_t value) override {
    auto& c = out_["counters"];
    c[name] = (c.contains(name) ? c[name].get<std::int64_t>() : 0) + value;
  }
  void event(const std::string& name, const std::vector<std::pair<std::string, double>>& fields) override {
    nlohmann::json e = {{"event", name}, {"rank", comm_.rank()}, {"at_s", comm_.now_s()}};
    for (const auto& [k, v] : fields) e[k] = v;
    out_["events"].push_back(std::move(e));
  }

 private:
  Comm& comm_;
  nlohmann::json& out_;
};

}  // namespace

nlohmann::json run_quadratic(const AlgoRun& run) {
  return run_isolated([&] {
    const AlgorithmSpec& spec = find_algorithm(run.algorithm, "test");
    ConfigReader reader(run.config, "test", "/algorithm");
    sim::SimJob job;
    job.platform = run.platform;
    job.workers = run.problem.workers;
    job.ranks = spec.ranks(reader, job.workers);
    job.steps = run.steps;
    job.fidelity = run.fidelity;
    job.scenario.failures = run.failures;
    job.scenario.joins = run.joins;
    job.scenario.leaves = run.leaves;
    job.scenario.restarts = run.restarts;
    job.main = spec.configure(reader, job.workers);
    reader.finish();
    job.simgrid_args = {"--log=root.thres:critical"};
    const int first_worker = job.ranks - job.workers;
    QuadraticProblem problem = run.problem;
    problem.first_worker_rank = first_worker;
    if (problem.shard_rows > 0) {  // GossipGraD's shuffle: which rows each worker trained on
      problem.rows_used = std::make_shared<std::vector<std::vector<std::uint32_t>>>(problem.workers);
    }
    job.make_compute = [&](Rank r, simgrid::s4u::Host*, sim::TimeAccount*, sim::Wires&) -> std::unique_ptr<Compute> {
      return std::make_unique<QuadraticCompute>(problem, r - first_worker, [](double s) {
        if (s > 0) simgrid::s4u::this_actor::sleep_for(s);
      });
    };
    nlohmann::json out;
    out["steps"] = std::vector<std::int64_t>(static_cast<std::size_t>(job.ranks), 0);
    job.make_recorder = [&](Comm& comm) -> std::unique_ptr<Recorder> {
      return std::make_unique<CaptureRecorder>(comm, out);
    };
    const auto outcome = sim::run_simulation(job);
    out["end_s"] = outcome.simulated_time_s;
    out["messages"] = outcome.messages;
    out["bytes_sent"] = outcome.bytes_sent;
    if (problem.rows_used) out["rows_used"] = *problem.rows_used;
    return out;
  });
}

AlgoRun master_worker_run(const std::string& algorithm, int P, std::int64_t steps, nlohmann::json config) {
  AlgoRun run;
  run.algorithm = algorithm;
  run.config = std::move(config);
  run.problem.workers = P;
  run.problem.dim = 6;
  run.steps = steps;
  run.platform = pinned_star(P + 1, 10e9, 5e-6);
  return run;
}

nlohmann::json run_quadratic_ok(const AlgoRun& run) {
  nlohmann::json out = run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  return out;
}

double distance_to_answer(const nlohmann::json& result, const QuadraticProblem& p) {
  const auto x = result.at("final").get<std::vector<double>>();
  const auto m = p.mean_target();
  double worst = 0;
  for (std::size_t k = 0; k < m.size(); ++k) worst = std::max(worst, std::abs(x[k] - m[k]));
  return worst;
}

nlohmann::json run_with_failed_worker(AlgoRun run, bool packed) {
  run.config["packed"] = packed;
  run.problem.blocks = packed ? 1 : 3;
  run.problem.same_target = true;
  const auto whole = run_quadratic(run);
  REQUIRE(!whole.contains("error"));
  run.failures = {{2, whole["end_s"].get<double>() / 3}};
  const auto out = run_quadratic(run);
  INFO(out.dump());
  REQUIRE(!out.contains("error"));
  REQUIRE(out["final_rank"] == 0);
  for (const int r : {1, 3, 4}) REQUIRE(out["steps"][r] == run.steps);
  REQUIRE(out["steps"][2] > 0);
  REQUIRE(out["steps"][2] < run.steps);
  REQUIRE(distance_to_answer(out, run.problem) < 1e-5);
  return out;
}

}  // namespace dts::test
