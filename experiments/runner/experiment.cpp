// Strict reading of experiment files into Plans.
#include "experiments/runner/experiment.hpp"

#include <filesystem>
#include <map>

#include "core/config_reader.hpp"
#include "experiments/runner/datasets.hpp"
#include "experiments/runner/result_dir.hpp"
#include "experiments/runner/scenario_reader.hpp"
#include "kernels/model/zoo_modeled.hpp"

namespace fs = std::filesystem;

namespace dts::exp {
namespace {

model::OptimizerConfig read_optimizer(ConfigReader r) {
  model::OptimizerConfig o;
  o.kind = r.choice("kind", "sgd", {"sgd", "momentum", "nesterov", "adam"});
  o.lr = r.number("lr", 0.01, 0.0, 1e3);
  if (o.kind == "momentum" || o.kind == "nesterov") o.momentum = r.number("momentum", 0.9, 0.0, 0.9999);
  o.weight_decay = r.number("weight_decay", 0.0, 0.0, 1.0);
  if (o.kind == "adam") {
    o.beta1 = r.number("beta1", 0.9, 0.0, 0.9999);
    o.beta2 = r.number("beta2", 0.999, 0.0, 0.999999);
    o.eps = r.number("eps", 1e-8, 0.0, 1.0);
  }
  o.lr_policy = r.choice("lr_policy", "fixed", {"fixed", "inv"});
  if (o.lr_policy == "inv") {
    o.lr_gamma = r.number("lr_gamma", 1e-4, 0.0, 1.0);
    o.lr_power = r.number("lr_power", 0.75, 0.0, 10.0);
  }
  r.finish();
  return o;
}

nlohmann::json optimizer_json(const model::OptimizerConfig& o) {
  return {{"kind", o.kind},         {"lr", o.lr},
          {"momentum", o.momentum}, {"weight_decay", o.weight_decay},
          {"beta1", o.beta1},       {"beta2", o.beta2},
          {"eps", o.eps},           {"lr_policy", o.lr_policy},
          {"lr_gamma", o.lr_gamma}, {"lr_power", o.lr_power}};
}

Plan read_plan(const nlohmann::json& j, const std::string& file, const std::string& variant, DataCache& cache,
               const SimulatorReader& simulator) {
  const std::string base_dir = fs::path(file).parent_path().string();
  ConfigReader root(j, file, variant.empty() ? "" : "/variants[" + variant + "]");
  Plan p;
  p.variant = variant;
  root.integer("schema_version", 1, 1, 1);
  p.experiment = root.string("name", fs::path(file).stem().string());
  if (const std::string why = plain_name_problem(p.experiment); !why.empty()) {
    root.fail("name", "the experiment's name names its default result directory, and this one " + why);
  }
  root.string("description", "");
  p.seed = static_cast<std::uint64_t>(root.integer("seed", 42, 0, std::int64_t{1} << 53));

  // Platform: a file name (relative to the experiment) or an inline object.
  std::shared_ptr<SimulatorPart> sim_part;
  if (!root.has("platform")) root.fail("platform", "required key is missing");
  const nlohmann::json& pj = root.raw("platform");
  if (pj.is_string()) {
    const std::string pf = (fs::path(base_dir) / pj.get<std::string>()).lexically_normal().string();
    if (const std::string why = input_file_problem(pf); !why.empty()) {
      root.fail("platform", "platform file " + echo(pf, 200) + ": " + why);
    }
    sim_part = simulator.read_platform_file(pf);
  } else {
    sim_part = simulator.read_platform(pj, file, base_dir);
  }

  ConfigReader m = root.child("model");
  p.model = m.string("name", "mlp");
  p.real = m.choice("numerics", "real", {"real", "modeled"}) == "real";
  p.backend = m.choice("backend", "onednn", {"onednn", "ref"});
  if (m.has("step_time_s")) p.step_time_s = m.number("step_time_s", 0, 0, 1e6);
  m.finish();

  ConfigReader d = root.child("data");
  // Relative paths resolve against the file's directory, and a synthetic set is drawn from the seed.
  const nlohmann::json data_section = root.has("data") ? root.raw("data") : nlohmann::json::object();
  const bool drawn = data_section.is_object() && data_section.contains("name") && data_section["name"] == "synthetic";
  const std::string key =
      data_section.dump() + " in " + base_dir + (drawn ? " seed " + std::to_string(p.seed) : std::string());
  if (!cache.count(key)) cache[key] = read_datasets(d, base_dir, p.seed);
  p.data = cache[key];
  if (p.data->modeled && p.real)
    d.fail("modeled", "a modeled data set has no samples: it needs model numerics \"modeled\"");
  if (p.real && model::is_zoo_model(p.model)) {
    m.fail("name", "'" + p.model + "' is a modeled-only zoo model (no kernels): it needs \"numerics\": \"modeled\"");
  }
  std::size_t num_params = 0;
  try {  // validates the name and the input shape
    const auto& t = p.data->train;
    if (p.real) {
      num_params = model::make_network(p.model, model::Backend::kRef, t.c, t.h, t.w, t.classes)->num_params();
    } else {
      const model::ModelProfile profile = model::model_profile(p.model, t.c, t.h, t.w, t.classes);
      num_params = profile.num_params;
      m.resolved()["num_params"] = profile.num_params;
      m.resolved()["input"] = {profile.input.c, profile.input.h, profile.input.w};
    }
  } catch (const InputError& e) {
    m.fail("name", e.what());
  }
  // KNL partitioning: every group holds the weights and the training set in the chip's memory (fp32).
  const double train_floats = static_cast<double>(p.data->train.n) * static_cast<double>(p.data->train.sample_size());
  simulator.check_capacity(*sim_part, 4.0 * static_cast<double>(num_params), 4.0 * train_floats);

  ConfigReader a = root.child("algorithm");
  p.algorithm = a.require_string("name");
  const AlgorithmSpec& spec = find_algorithm(p.algorithm, a.where("name"));
  p.workers = static_cast<int>(a.integer("workers", 1, 1, 1 << 20));
  p.ranks = spec.ranks(a, p.workers);
  p.batch = static_cast<int>(a.integer("batch_size", 32, 1, 1 << 20));
  p.optimizer = read_optimizer(a.child("optimizer"));
  p.main = spec.configure(a, p.workers);
  if (spec.lr_factor) p.optimizer.lr *= spec.lr_factor(a, p.workers);
  a.finish();
  const std::int64_t shard = p.data->train.n / p.workers;
  if (shard < p.batch) {
    a.fail("batch_size", "each worker's shard has " + std::to_string(shard) + " samples, fewer than one batch of " +
                             std::to_string(p.batch));
  }

  nlohmann::json scenario_resolved;
  if (root.has("scenario")) {
    p.scenario = read_scenario(root, base_dir, {p.ranks, p.workers, p.seed, &spec}, scenario_resolved);
  } else {
    p.scenario = std::make_shared<const Scenario>();
  }

  ConfigReader r = root.child("run");
  const bool by_steps = r.has("steps"), by_epochs = r.has("epochs");
  if (by_steps == by_epochs) r.fail("steps", "give exactly one of steps and epochs");
  const std::int64_t steps_per_epoch = shard / p.batch;
  p.steps = by_steps
                ? r.integer("steps", 1, 1, std::int64_t{1} << 40)
                : static_cast<std::int64_t>(r.number("epochs", 1, 1e-6, 1e6) * static_cast<double>(steps_per_epoch));
  if (p.steps < 1) r.fail("epochs", "less than one step per worker");
  p.eval_every_steps = r.integer("eval_every_steps", 0, 0, std::int64_t{1} << 40);
  p.log_every_steps = r.integer("log_every_steps", 10, 1, std::int64_t{1} << 40);
  p.eval_replicas = r.boolean("eval_replicas", false);
  p.measure_from_step = r.integer("measure_from_step", 0, 0, std::int64_t{1} << 40);
  if (p.measure_from_step >= p.steps) {
    r.fail("measure_from_step", "must be below the run's " + std::to_string(p.steps) + " steps per worker");
  }
  if (p.eval_replicas && !p.real) r.fail("eval_replicas", "modeled numerics have no replicas to evaluate");
  simulator.read_run(r, *sim_part);
  r.finish();
  if (root.has("variants")) root.raw("variants");  // expanded by the caller
  root.finish();

  p.resolved = nlohmann::json::object();
  p.resolved["schema_version"] = 1;
  p.resolved["name"] = p.experiment;
  if (!variant.empty()) p.resolved["variant"] = variant;
  p.resolved["seed"] = p.seed;
  p.resolved["platform"] = sim_part->resolved_platform();
  p.resolved["model"] = m.resolved();
  p.resolved["data"] = p.data->resolved;
  p.resolved["algorithm"] = a.resolved();
  p.resolved["algorithm"]["name"] = p.algorithm;
  p.resolved["algorithm"]["ranks"] = p.ranks;
  p.resolved["algorithm"]["optimizer"] = optimizer_json(p.optimizer);
  if (!scenario_resolved.is_null()) p.resolved["scenario"] = scenario_resolved;
  p.resolved["run"] = r.resolved();
  p.resolved["run"]["steps"] = p.steps;
  p.resolved["run"]["steps_per_epoch"] = steps_per_epoch;
  p.simulator = std::move(sim_part);
  return p;
}

void apply_set(nlohmann::json& j, const std::string& assignment) {
  const std::string where = "--set " + echo(assignment);
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(where, "expected key.path=value");
  if (!valid_utf8(assignment)) throw ConfigError(where, "not valid UTF-8");
  const std::string path = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (keys.back().empty()) throw ConfigError(where, "empty key in path");
    if (keys.size() > static_cast<std::size_t>(kMaxJsonDepth))
      throw ConfigError(where, "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // The value sits inside as many objects as the path has keys: the whole stays within kMaxJsonDepth.
  std::string json_path;
  for (const auto& k : keys) {
    json_path += '/';
    json_path += echo(k, 40);
  }
  const auto parsed = parse_json_or_text(text, where, json_path, static_cast<int>(keys.size()));
  const nlohmann::json value = parsed ? *parsed : nlohmann::json(text);  // not JSON: a bare string
  nlohmann::json* node = &j;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!node->is_object()) throw ConfigError(where, "\"" + echo(keys[i], 40) + "\" is inside a non-object");
    if (i + 1 == keys.size()) {
      if (value.is_null()) {
        node->erase(keys[i]);  // as in a JSON merge patch: null removes the key
      } else {
        (*node)[keys[i]] = value;
      }
      return;
    }
    node = &(*node)[keys[i]];
    if (node->is_null()) *node = nlohmann::json::object();
  }
}

// `--set variants=...` or `--set variants.x=...`: about the list of variants, not a key of each.
bool sets_variants(const std::string& assignment) {
  return assignment.rfind("variants", 0) == 0 &&
         (assignment.size() == 8 || assignment[8] == '=' || assignment[8] == '.');
}

}  // namespace

std::vector<Plan> read_experiment(const nlohmann::json& j, const std::string& file, const SimulatorReader& simulator,
                                  const std::vector<std::string>& sets, DataCache* shared) {
  if (!j.is_object()) throw ConfigError(file, "an experiment is a JSON object");
  DataCache own;
  DataCache& cache = shared != nullptr ? *shared : own;
  std::vector<Plan> plans;
  if (!j.contains("variants")) {
    plans.push_back(read_plan(j, file, "", cache, simulator));
    return plans;
  }
  const auto& vs = j.at("variants");
  if (!vs.is_array() || vs.empty()) throw ConfigError(file + ":/variants", "expected a non-empty array");
  nlohmann::json base = j;
  base.erase("variants");
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const std::string where = file + ":/variants/" + std::to_string(i);
    if (!vs[i].is_object() || !vs[i].contains("name") || !vs[i]["name"].is_string()) {
      throw ConfigError(where, "a variant is an object with a \"name\" and the keys it changes");
    }
    nlohmann::json patch = vs[i];
    const std::string name = patch["name"].get<std::string>();
    if (const std::string why = plain_name_problem(name); !why.empty()) {
      throw ConfigError(where + "/name", "a variant name names its result directory, and this one " + why);
    }
    patch.erase("name");
    nlohmann::json merged = base;
    merged.merge_patch(patch);
    // --set beats the variant: applied again over its keys (those naming `variants` were applied once, before).
    for (const auto& s : sets) {
      if (sets_variants(s)) continue;
      try {
        apply_set(merged, s);
      } catch (const InputError& e) {
        throw ConfigError(where, std::string("over this variant: ") + e.what());
      }
    }
    for (const auto& p : plans) {
      if (p.variant == name) throw ConfigError(where + "/name", "duplicate variant name \"" + name + "\"");
    }
    plans.push_back(read_plan(merged, file, name, cache, simulator));
  }
  return plans;
}

std::vector<Plan> load_experiment(const std::string& file, const std::vector<std::string>& sets,
                                  const SimulatorReader& simulator, DataCache* cache) {
  nlohmann::json j = read_json_file(file, "experiment file");
  for (const auto& s : sets) apply_set(j, s);
  return read_experiment(j, file, simulator, sets, cache);
}

}  // namespace dts::exp
