// The gossip family of the Elastic Gossip thesis (papers/elastic_gossip.md) on the quadratic problem: Elastic
// Gossip's exchange conserves the mean of the models and pull gossip's does not; an isolated pair contracts by
// (1 - 2 alpha); push-sum conserves sum_i w_i x_i with weights summing to one; no_comm sends nothing; the
// messages of each synchronisation mode; every algorithm converges; the asynchronous mode lets a 2x straggler
// fall behind alone.
#include <catch2/catch.hpp>

#include <cmath>

#include "algorithms/gossip_choice.hpp"
#include "tests/algorithms/algo_harness.hpp"
#include "tests/sim/sim_harness.hpp"

using dts::test::AlgoRun;
using nlohmann::json;

namespace {

AlgoRun family_run(const std::string& algorithm, int P, std::int64_t steps, json config) {
  AlgoRun run;
  run.algorithm = algorithm;
  if (algorithm != "no_comm") config["seed"] = 11;
  run.config = std::move(config);
  run.problem.workers = P;
  run.problem.dim = 5;
  run.steps = steps;
  run.platform = dts::test::pinned_star(P, 10e9, 5e-6);
  return run;
}

// A run with lr 0 from models that start apart (worker i at c_i): only the exchanges move the models.
AlgoRun exchange_only(const std::string& algorithm, int P, std::int64_t steps, json config) {
  AlgoRun run = family_run(algorithm, P, steps, std::move(config));
  run.problem.lr = 0;
  run.problem.init_at_target = true;
  return run;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (std::size_t k = 0; k < a.size(); ++k) d = std::max(d, std::abs(a[k] - b[k]));
  return d;
}

std::vector<double> final_of(const json& out) { return out.at("final").get<std::vector<double>>(); }
std::vector<double> rank0_of(const json& out) { return out.at("own").at("0").get<std::vector<double>>(); }

// The messages of the choices alone: sum over the updates of f(choices).
template <class F>
std::int64_t over_choices(double p, int P, std::int64_t steps, F f) {
  std::int64_t n = 0;
  for (std::int64_t u = 1; u <= steps; ++u) n += f(dts::gossip_choices({p, 1, 11}, P, u));
  return n;
}

}  // namespace

TEST_CASE("elastic_gossip: the exchange conserves the mean of the models; pull and push gossip do not",
          "[algorithms][gossip]") {
  const std::string sync = GENERATE("global", "shared", "async");
  INFO(sync);
  const int P = 5;
  const auto eg = dts::test::run_quadratic_ok(exchange_only("elastic_gossip", P, 4, {{"sync", sync}}));
  const auto mean = exchange_only("elastic_gossip", P, 4, {}).problem.mean_target();
  CHECK(max_abs_diff(final_of(eg), mean) < 1e-6);
  CHECK(max_abs_diff(rank0_of(eg), mean) > 1e-3);  // the models moved, but not to the mean yet
  for (const std::string other : {"gossip_pull", "gossip_push"}) {
    INFO(other);
    const auto out = dts::test::run_quadratic_ok(exchange_only(other, P, 4, {{"sync", sync}}));
    CHECK(max_abs_diff(final_of(out), mean) > 1e-3);
  }
}

TEST_CASE("elastic_gossip: an isolated pair contracts by (1 - 2 alpha) per exchange", "[algorithms][gossip]") {
  /* Two workers both choose each other at every update (p = 1); K is a set, so each moves alpha of the
   * difference once: x0 - x1 <- (1 - 2 alpha)(x0 - x1). Rank 0's own model and the average give x1. */
  const double alpha = GENERATE(0.1, 0.25, 0.5, 0.75, 1.0);
  const std::int64_t steps = GENERATE(1, 2);
  INFO("alpha " << alpha << ", steps " << steps);
  const AlgoRun run = exchange_only("elastic_gossip", 2, steps, {{"alpha", alpha}});
  const auto out = dts::test::run_quadratic_ok(run);
  const auto x0 = rank0_of(out), avg = final_of(out);
  const auto c0 = run.problem.target(0), c1 = run.problem.target(1);
  const double f = std::pow(1 - 2 * alpha, static_cast<double>(steps));
  for (std::size_t k = 0; k < x0.size(); ++k) {
    const double x1 = 2 * avg[k] - x0[k];
    CHECK(x0[k] - x1 == Approx(f * (c0[k] - c1[k])).margin(1e-6));
    CHECK(avg[k] == Approx((c0[k] + c1[k]) / 2.0).margin(1e-6));
  }
}

TEST_CASE("gosgd: the push-sum weights sum to one and sum_i w_i x_i is conserved, at every step",
          "[algorithms][gossip]") {
  /* lr 0, models starting apart: the final model sum_i w_i x_i must be the mean of the starting models after
   * any number of steps (it would be scaled by sum_i w_i if the weights drifted, or move if the mixing lost
   * mass); rank 0's own model tends to that mean (push-sum consensus). */
  const std::string sync = GENERATE("global", "shared", "async");
  INFO(sync);
  for (const std::int64_t steps : {1, 2, 3, 5, 8, 13}) {
    INFO("steps " << steps);
    const AlgoRun run = exchange_only("gosgd", 5, steps, {{"sync", sync}, {"probability", 0.6}});
    CHECK(max_abs_diff(final_of(dts::test::run_quadratic_ok(run)), run.problem.mean_target()) < 2e-6);
  }
  const AlgoRun run = exchange_only("gosgd", 5, 80, {{"sync", sync}});
  CHECK(max_abs_diff(rank0_of(dts::test::run_quadratic_ok(run)), run.problem.mean_target()) < 1e-4);
}

TEST_CASE("no_comm sends nothing but the final average; its barrier is one tree allreduce a step",
          "[algorithms][gossip]") {
  const int P = 4;
  const std::int64_t steps = 5;
  const auto plain = dts::test::run_quadratic_ok(family_run("no_comm", P, steps, json::object()));
  CHECK(plain["messages"] == 2 * (P - 1));  // the final tree allreduce alone
  for (const auto& b : plain["bytes_sent"]) CHECK(b.get<std::uint64_t>() <= 2 * 4 * 5);
  const auto barrier = dts::test::run_quadratic_ok(family_run("no_comm", P, steps, {{"barrier", true}}));
  CHECK(barrier["messages"] == (steps + 1) * 2 * (P - 1));
}

TEST_CASE("gossip family: the messages of each synchronisation mode", "[algorithms][gossip]") {
  /* global: every update a barrier (tree allreduce, 2 (P-1) messages) and an all_gather of the choices (ring,
   * P (P-1)) even when nobody communicates; shared: the exchanges alone. Then the final average, 2 (P-1). */
  const int P = 5;
  const std::int64_t steps = 6;
  const std::int64_t final_avg = 2 * (P - 1), control = 2 * (P - 1) + P * (P - 1);
  const auto quiet = dts::test::run_quadratic_ok(family_run("elastic_gossip", P, steps, {{"probability", 1e-9}}));
  CHECK(quiet["messages"] == steps * control + final_avg);
  const auto quiet_shared =
      dts::test::run_quadratic_ok(family_run("elastic_gossip", P, steps, {{"probability", 1e-9}, {"sync", "shared"}}));
  CHECK(quiet_shared["messages"] == final_avg);

  const double p = 0.5;
  const auto partners = over_choices(p, P, steps, [&](const std::vector<dts::Rank>& c) {
    std::int64_t n = 0;
    for (dts::Rank i = 0; i < P; ++i) n += static_cast<std::int64_t>(dts::gossip_partners(c, i).size());
    return n;
  });
  const auto initiators = over_choices(p, P, steps, [&](const std::vector<dts::Rank>& c) {
    return std::count_if(c.begin(), c.end(), [](dts::Rank r) { return r >= 0; });
  });
  REQUIRE(initiators > 0);
  const json shared = {{"probability", p}, {"sync", "shared"}};
  CHECK(dts::test::run_quadratic_ok(family_run("elastic_gossip", P, steps, shared))["messages"] ==
        partners + final_avg);
  CHECK(dts::test::run_quadratic_ok(family_run("elastic_gossip", P, steps, {{"probability", p}}))["messages"] ==
        partners + steps * control + final_avg);
  CHECK(dts::test::run_quadratic_ok(family_run("gossip_pull", P, steps, shared))["messages"] == initiators + final_avg);
  CHECK(dts::test::run_quadratic_ok(family_run("gossip_push", P, steps, shared))["messages"] == initiators + final_avg);
  CHECK(dts::test::run_quadratic_ok(family_run("gosgd", P, steps, shared))["messages"] == 2 * initiators + final_avg);
}

TEST_CASE("elastic_gossip: cap_alpha caps alpha |K| at 1 and counts the updates where it did", "[algorithms][gossip]") {
  const int P = 6;
  const std::int64_t steps = 10;
  const auto out =
      dts::test::run_quadratic_ok(family_run("elastic_gossip", P, steps, {{"alpha", 0.5}, {"cap_alpha", true}}));
  const auto over = over_choices(1.0, P, steps, [&](const std::vector<dts::Rank>& c) {
    std::int64_t n = 0;
    for (dts::Rank i = 0; i < P; ++i) n += dts::gossip_partners(c, i).size() >= 3 ? 1 : 0;
    return n;
  });
  REQUIRE(over > 0);
  CHECK(out["counters"]["cap_alpha_triggered"] == over);
  CHECK(out["counters"]["gossip_initiations"] == P * steps);
}

TEST_CASE("gossip family: every algorithm converges on the quadratic, in every mode", "[algorithms][gossip]") {
  /* Synchronous Elastic Gossip conserves the mean and the gradients are linear, so its average follows gradient
   * descent on the mean of the f_i and reaches the mean of the targets; no_comm's average is the mean of the
   * workers' own optima. Pull, push and push-sum do not conserve the plain mean, and asynchronous Elastic Gossip
   * takes its workers' gradients at different moments: they are run on a consensus problem (one target for all),
   * where every model must reach it. */
  const std::string sync = GENERATE("global", "shared", "async");
  INFO(sync);
  for (const std::string algo : {"elastic_gossip", "gossip_pull", "gossip_push", "gosgd", "no_comm"}) {
    INFO(algo);
    AlgoRun run = family_run(algo, 4, 250, json::object());
    if (algo != "no_comm") {
      run.config["sync"] = sync;
      run.config["probability"] = 0.5;
    }
    run.problem.same_target = algo != "no_comm" && (algo != "elastic_gossip" || sync == "async");
    const auto out = dts::test::run_quadratic_ok(run);
    CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-5);
    for (const auto& s : out["steps"]) CHECK(s == 250);
  }
}

TEST_CASE("gossip family: in the async mode a 2x straggler falls behind alone; the global barrier holds all back",
          "[algorithms][gossip]") {
  for (const std::string algo : {"elastic_gossip", "gossip_pull", "gossip_push", "gosgd"}) {
    INFO(algo);
    AlgoRun run = family_run(algo, 4, 150, {{"probability", 0.5}, {"sync", "async"}});
    run.problem.slowdown = {1, 2, 1, 1};
    run.problem.same_target = true;
    const auto out = dts::test::run_quadratic_ok(run);
    for (const auto& s : out["steps"]) CHECK(s == 150);
    CHECK(dts::test::distance_to_answer(out, run.problem) < 1e-3);
    const double slow = out["last_step_s"][1].get<double>();
    CHECK(out["last_step_s"][0].get<double>() < 0.8 * slow);
    CHECK(out["last_step_s"][3].get<double>() < 0.8 * slow);
    run.config["sync"] = "global";
    const auto held = dts::test::run_quadratic_ok(run);
    CHECK(held["last_step_s"][0].get<double>() > 0.95 * held["last_step_s"][1].get<double>());
  }
}

TEST_CASE("gossip family: a single worker trains alone in every mode", "[algorithms][gossip]") {
  const std::string sync = GENERATE("global", "shared", "async");
  for (const std::string algo : {"elastic_gossip", "gossip_pull", "gossip_push", "gosgd"}) {
    INFO(algo << " " << sync);
    const AlgoRun run = family_run(algo, 1, 200, {{"sync", sync}});
    CHECK(dts::test::distance_to_answer(dts::test::run_quadratic_ok(run), run.problem) < 1e-5);
  }
}

TEST_CASE("gossip family: the keys are read strictly", "[algorithms][gossip]") {
  for (const json& bad : {json{{"sync", "sometimes"}}, json{{"alpha", 1.5}}, json{{"probability", 0}},
                          json{{"period", 0}}, json{{"cap_alpha", true}, {"sync", "async"}}, json{{"beta", 1}}}) {
    INFO(bad.dump());
    const auto out = dts::test::run_quadratic(family_run("elastic_gossip", 3, 2, bad));
    CHECK(out.contains("error"));
  }
}
