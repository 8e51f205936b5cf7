// Metrics rows, CSV output, evaluation and the progress line.
#include "experiments/runner/metrics.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "experiments/runner/replicas.hpp"

namespace dts::exp {

Evaluator::Evaluator(const std::string& network, model::Backend backend, const data::Dataset& test)
    : net_(model::make_network(network, backend, test.c, test.h, test.w, test.classes)), test_(test) {}

model::EvalResult Evaluator::evaluate(ConstSlice params) { return net_->evaluate(params.data, test_); }

Progress::Progress(std::string label, std::int64_t total_steps, std::string clock)
    : label_(std::move(label)),
      clock_(std::move(clock)),
      total_(total_steps),
      start_(std::chrono::steady_clock::now()),
      last_(start_),
      tty_(isatty(2) != 0) {}

std::string Progress::label(const std::string& name, std::size_t index, std::size_t count) {
  return count > 1 ? name + ", " + std::to_string(index + 1) + " of " + std::to_string(count) : name;
}

std::string duration(double s) {
  char buf[32];
  if (s < 100) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 6000) {
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

void Progress::step(std::int64_t step, double now_s, std::optional<float> loss) {
  step_ = std::max(step_, step);
  now_s_ = now_s;
  if (loss && std::isfinite(*loss)) loss_ = loss;
  const auto t = std::chrono::steady_clock::now();
  if (t - last_ >= std::chrono::seconds(tty_ ? 1 : 10)) {
    last_ = t;
    print(false);
  }
}

void Progress::eval(double accuracy) { acc_ = accuracy; }

void Progress::done(double now_s) {
  now_s_ = now_s;
  print(true);
}

void Progress::print(bool final) {
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, "[%s] step %lld/%lld  %s %.3f s", label_.c_str(),
                        static_cast<long long>(step_), static_cast<long long>(total_), clock_.c_str(), now_s_);
  if (loss_ && n > 0) n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "  loss %.4f", *loss_);
  if (acc_ && n > 0) n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "  test acc %.4f", *acc_);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string times = "  wall " + duration(wall);
  if (!final && step_ > 0 && step_ < total_) {
    times += ", ETA " + duration(wall / static_cast<double>(step_) * static_cast<double>(total_ - step_));
  }
  if (n > 0) std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "%s", times.c_str());
  std::fprintf(stderr, tty_ ? "\r%s\033[K%s" : "%s%s", buf, final || !tty_ ? "\n" : "");
  std::fflush(stderr);
}

void MetricsLog::write_csv(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("cannot write " + path);
  std::fprintf(
      f, "time_s,rank,step,loss,test_accuracy,test_loss,bytes_sent,bytes_received,kind,clock,consensus_distance\n");
  for (const auto& r : rows) {
    std::fprintf(f, "%.9g,", r.time_s);
    if (!r.aggregate) std::fprintf(f, "%d", r.rank);
    std::fprintf(f, ",%lld,", static_cast<long long>(r.step));
    if (r.loss && std::isfinite(*r.loss)) std::fprintf(f, "%.7g", static_cast<double>(*r.loss));
    std::fprintf(f, ",");
    if (r.eval)
      std::fprintf(f, "%.6f,%.7g", r.eval->accuracy(), r.eval->mean_loss);
    else
      std::fprintf(f, ",");
    const char* kind = r.aggregate ? "aggregate" : r.replica ? "replica" : r.eval ? "eval" : "train";
    if (r.aggregate)
      std::fprintf(f, ",,,%s,%s,%.9g\n", kind, clock.c_str(), r.consensus_distance.value_or(0.0));
    else
      std::fprintf(f, ",%llu,%llu,%s,%s,\n", static_cast<unsigned long long>(r.bytes_sent),
                   static_cast<unsigned long long>(r.bytes_received), kind, clock.c_str());
  }
  if (std::fclose(f) != 0) throw std::runtime_error("cannot write " + path);
}

RankActivity& MetricsLog::rank(Rank r) {
  DTS_ASSERT(r >= 0, "a negative rank");
  if (per_rank.size() <= static_cast<std::size_t>(r)) per_rank.resize(static_cast<std::size_t>(r) + 1);
  return per_rank[static_cast<std::size_t>(r)];
}

void MetricsLog::write_rank_csvs(const std::string& ranks_path, const std::string& waits_path, int ranks) const {
  std::FILE* f = std::fopen(ranks_path.c_str(), "w");
  std::FILE* w = std::fopen(waits_path.c_str(), "w");
  if (!f || !w) {
    if (f) std::fclose(f);
    if (w) std::fclose(w);
    throw std::runtime_error("cannot write " + (f ? waits_path : ranks_path));
  }
  std::fprintf(f, "rank,steps,idle_s,waited_s\n");
  std::fprintf(w, "rank,peer,waited_s\n");
  for (Rank r = 0; r < ranks; ++r) {
    const RankActivity none;
    const RankActivity& a =
        static_cast<std::size_t>(r) < per_rank.size() ? per_rank[static_cast<std::size_t>(r)] : none;
    double waited = 0;
    for (const auto& [peer, s] : a.waited_on) {
      waited += s;
      std::fprintf(w, "%d,%d,%.9g\n", r, peer, s);
    }
    std::fprintf(f, "%d,%lld,%.9g,%.9g\n", r, static_cast<long long>(a.steps), a.idle_s, waited);
  }
  const bool ok = std::fclose(f) == 0;
  if (std::fclose(w) != 0 || !ok) throw std::runtime_error("cannot write " + ranks_path + " or " + waits_path);
}

namespace {
// FNV-1a 64 of the parameters' bytes, hex.
std::string model_hash(ConstSlice params) {
  const std::uint64_t h = fnv1a(std::as_bytes(params.data));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}
}  // namespace

MetricsRecorder::MetricsRecorder(Comm& comm, MetricsLog& log, Evaluator* evaluator, Progress* progress,
                                 const Cadence& cadence, ReplicaObserver* replicas)
    : comm_(comm), log_(log), evaluator_(evaluator), progress_(progress), cadence_(cadence), replicas_(replicas) {}

MetricsRow MetricsRecorder::row(std::int64_t step) const {
  MetricsRow r;
  r.time_s = comm_.now_s();
  r.rank = comm_.rank();
  r.step = step;
  r.bytes_sent = comm_.bytes_sent();
  r.bytes_received = comm_.bytes_received();
  return r;
}

void MetricsRecorder::step(std::int64_t step, float loss) {
  RankActivity& activity = log_.rank(comm_.rank());
  ++activity.steps;
  const RankActivity::Mark mark{step, comm_.now_s(), comm_.bytes_sent(), comm_.bytes_received()};
  activity.last = mark;
  if (cadence_.measure_from_step > 0 && step == cadence_.measure_from_step) activity.window_from = mark;
  if (progress_) progress_->step(step, comm_.now_s(), loss);
  if (step % cadence_.log_every_steps != 0) return;
  MetricsRow r = row(step);
  r.loss = loss;
  log_.rows.push_back(r);
}

bool MetricsRecorder::eval_due(std::int64_t step) const {
  return cadence_.eval_every_steps > 0 && step % cadence_.eval_every_steps == 0;
}

void MetricsRecorder::evaluate(std::int64_t step, ConstSlice params, bool final) {
  if (!evaluator_ || params.data.empty()) return;  // modeled numerics: there is no model to evaluate
  MetricsRow r = row(step);
  r.eval = evaluator_->evaluate(params);
  log_.rows.push_back(r);
  if (final) {
    log_.final_eval = r;
    log_.final_model_hash = model_hash(params);
  }
  if (progress_) progress_->eval(r.eval->accuracy());
}

void MetricsRecorder::evaluate_own(std::int64_t step, ConstSlice params) {
  if (!evaluator_ || params.data.empty()) return;
  MetricsRow r = row(step);
  r.eval = evaluator_->evaluate(params);
  log_.rows.push_back(r);
  if (comm_.rank() == 0) {
    log_.rank0_eval = r;
    log_.rank0_model_hash = model_hash(params);
  }
}

void MetricsRecorder::count(const std::string& name, std::int64_t value) { log_.counters[name] += value; }

void MetricsRecorder::event(const std::string& name, const std::vector<std::pair<std::string, double>>& fields) {
  nlohmann::json e = {{"at_s", comm_.now_s()}, {"rank", comm_.rank()}, {"event", name}};
  for (const auto& [key, value] : fields) e[key] = value;
  log_.events.push_back(std::move(e));
}

void MetricsRecorder::observe(std::int64_t step, ConstSlice params) {
  if (params.data.empty()) return;
  if (cadence_.eval_replicas && evaluator_) {
    MetricsRow r = row(step);
    r.eval = evaluator_->evaluate(params);
    r.replica = true;
    log_.rows.push_back(r);
  }
  if (replicas_) replicas_->observe(step, params, comm_.now_s());
}

}  // namespace dts::exp
