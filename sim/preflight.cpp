// The pre-run check in a child process. The child reports the step it begins and how it ended as records on
// the pipe that also carries its stderr (SimGrid's own messages), so that the parent knows which step SimGrid
// refused even when SimGrid aborted or exited.
#include "sim/preflight.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <functional>
#include <sstream>
#include <string_view>

#include "core/child_process.hpp"
#include "core/errors.hpp"
#include "sim/actor_stack.hpp"
#include "sim/launcher.hpp"
#include "sim/scenario_sim.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

// A record: kBegin tag kSep payload kEnd. SimGrid's output holds none of these bytes.
constexpr char kBegin = '\x1e', kSep = '\x1f', kEnd = '\x1d';
constexpr std::size_t kKeptOutput = 64 * 1024;  // the tail of SimGrid's output kept for the message

void write_all(int fd, const std::string& s) {
  for (std::size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void record(const std::string& tag, const std::string& payload) {
  write_all(STDERR_FILENO, std::string(1, kBegin) + tag + kSep + payload + kEnd);
}

struct Outcome {
  bool ok = false;     // the child reached the end of the check
  std::string step;    // the last step begun
  std::string output;  // what the child printed since that step began (its tail)
  std::string error;   // an exception's message
  bool input = false;  // an InputError of ours:
  std::string input_where, input_what;

  void take(const std::string& tag, const std::string& payload) {
    if (tag == "step") {
      step = payload;
      output.clear();
    } else if (tag == "ok") {
      ok = true;
    } else if (tag == "error") {
      if (error.empty()) error = payload;  // the first: a later one may follow from it
    } else if (tag == "input") {
      input = true;
      const auto sep = payload.find(kSep);
      input_where = payload.substr(0, sep);
      input_what = sep == std::string::npos ? "" : payload.substr(sep + 1);
    }
  }
  void print(char c) {
    output += c;
    if (output.size() > 2 * kKeptOutput) output.erase(0, output.size() - kKeptOutput);
  }
};

// Runs `body` in a child process that dies with dtsim (even by SIGKILL), its stderr on a pipe, stdout discarded,
// and reads back how it went.
Outcome in_child(const std::function<void(const StepHook&)>& body) {
  ChildOptions opts;
  opts.pipe = ChildOptions::Pipe::kStderr;
  opts.stdout_to_null = true;
  opts.die_with_parent = true;
  ChildProcess child(
      [&body](int) {
        try {
          body([](const std::string& step) { record("step", step); });
          record("ok", "");
        } catch (const InputError& e) {
          const std::string what = e.what();
          record("input", e.where() + kSep + (e.where().empty() ? what : what.substr(e.where().size() + 2)));
        } catch (const std::exception& e) {
          record("error", e.what());
        }
        return 0;
      },
      opts);
  Outcome o;
  bool in_record = false;
  std::string rec;
  child.read([&](std::string_view chunk) {
    for (const char c : chunk) {
      if (c == kBegin) {
        in_record = true;
        rec.clear();
      } else if (in_record && c == kEnd) {
        in_record = false;
        const auto sep = rec.find(kSep);
        o.take(rec.substr(0, sep), sep == std::string::npos ? "" : rec.substr(sep + 1));
      } else if (in_record) {
        rec += c;
      } else {
        o.print(c);
      }
    }
  });
  child.wait();
  return o;
}

// SimGrid's complaint: an exception's message without the list of every option SimGrid appends to "Bad config
// key", or the CRITICAL / ERROR lines it printed before it aborted ("[0.000000] f.cpp:12: [cat/CRITICAL] msg").
std::string complaint(const Outcome& o) {
  std::string msg;
  const auto add = [&msg](std::string line) {
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) msg += (msg.empty() ? "" : "; ") + line;
  };
  if (!o.error.empty()) {
    const std::string text = o.error.substr(0, o.error.find("\nExisting config keys"));
    for (std::size_t start = 0; start < text.size();) {
      const auto nl = text.find('\n', start);
      add(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
      start = nl == std::string::npos ? text.size() : nl + 1;
    }
    return echo(msg, 300);
  }
  for (const char* level : {"/CRITICAL] ", "/ERROR] "}) {
    for (std::size_t start = 0; start < o.output.size();) {
      const auto nl = o.output.find('\n', start);
      const std::string line = o.output.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (const auto at = line.find(level); at != std::string::npos) add(line.substr(at + std::string(level).size()));
      start = nl == std::string::npos ? o.output.size() : nl + 1;
    }
    if (!msg.empty()) return echo(msg, 300);
  }
  return "SimGrid ended the process";
}

// The Engine as run_simulation makes it; never destroyed (the child ends with _exit).
sg4::Engine* make_engine(const std::vector<std::string>& simgrid_args) {
  auto* args = new std::vector<std::string>(engine_args(simgrid_args));
  args->emplace_back("--cfg=tracing:no");  // a check writes nothing
  auto* argv = new std::vector<char*>;
  for (auto& a : *args) argv->push_back(a.data());
  argv->push_back(nullptr);
  auto* argc = new int(static_cast<int>(args->size()));
  return new sg4::Engine(argc, argv->data());
}

// SimGrid loads an XML host with no speed, or a link with no bandwidth, and aborts at the first use of it.
void check_resources(const PlatformSpec& spec) {
  const bool xml = spec.topology == "xml";
  const auto check = [&](bool ok, const std::string& what, const std::string& name, const char* quantity, double v) {
    if (ok && std::isfinite(v)) return;
    std::ostringstream os;
    os << (xml ? spec.xml_file + ": " : "") << what << " '" << echo(name, 60) << "' has " << quantity << " " << v
       << "; it must be " << (what == "host" || std::string(quantity) == "bandwidth" ? "positive" : "non-negative")
       << " and finite";
    throw InputError(spec.origin + (xml ? "/xml" : ""), os.str());
  };
  for (const sg4::Host* h : sg4::Engine::get_instance()->get_all_hosts()) {
    check(h->get_speed() > 0, "host", h->get_name(), "speed", h->get_speed());
  }
  for (const sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) {
    check(l->get_bandwidth() > 0, "link", l->get_name(), "bandwidth", l->get_bandwidth());
    check(l->get_latency() >= 0, "link", l->get_name(), "latency", l->get_latency());
  }
}

Outcome run_args_check(const std::vector<std::string>& simgrid_args) {
  return in_child([&](const StepHook& step) {
    step("args");
    make_engine(simgrid_args);
  });
}

}  // namespace

void check_simgrid_args(const std::vector<std::string>& simgrid_args) {
  if (simgrid_args.empty()) return;
  Outcome o = run_args_check(simgrid_args);
  if (o.ok) return;
  // The first argument whose prefix of the list fails.
  std::size_t bad = simgrid_args.size() - 1;
  for (std::size_t i = 0; i + 1 < simgrid_args.size(); ++i) {
    Outcome prefix = run_args_check({simgrid_args.begin(), simgrid_args.begin() + static_cast<std::ptrdiff_t>(i + 1)});
    if (!prefix.ok) {
      bad = i;
      o = std::move(prefix);
      break;
    }
  }
  throw InputError(echo(simgrid_args[bad]), "SimGrid refuses it: " + complaint(o));
}

void check_platform(const PlatformSpec& spec, int ranks, int workers, const std::vector<std::string>& simgrid_args,
                    const Scenario& scenario) {
  const Outcome o = in_child([&](const StepHook& step) {
    step("args");
    sg4::Engine* engine = make_engine(simgrid_args);
    const std::vector<sg4::Host*> hosts = build_platform(spec, ranks, workers, step);
    check_resources(spec);
    step("seal");
    engine->seal_platform();
    scenario_links(scenario, hosts);
    // SimGrid reads some options only at the first message (smpi/bw-factor): one byte from the first rank's
    // host to the last's.
    step("run");
    const auto guarded = [](std::function<void()> fn) {
      return [fn] {
        try {
          fn();
        } catch (const simgrid::ForcefulKillException&) {
          throw;
        } catch (const std::exception& e) {  // reported at once: SimGrid may abort on the broken comm
          record("error", e.what());
          _exit(0);
        }
      };
    };
    sg4::Mailbox* mb = sg4::Mailbox::by_name("dts-preflight");
    static char byte = 0;
    start_actor("preflight-send", hosts.front(), kRankStackKiB, guarded([mb] { mb->put(&byte, 1); }));
    start_actor("preflight-recv", hosts.back(), kRankStackKiB, guarded([mb] { mb->get<char>(); }));
    engine->run();
  });
  if (o.ok) return;
  if (o.input) throw InputError(o.input_where, o.input_what);
  if (o.step == "args") throw InputError("--cfg/--log arguments", "SimGrid refuses them: " + complaint(o));
  if (o.step == "xml")
    throw InputError(spec.origin + "/xml", "SimGrid cannot load " + spec.xml_file + ": " + complaint(o));
  if (o.step.empty() || o.step == "build" || o.step == "seal" || o.step == "run") {
    throw InputError(spec.origin, "SimGrid refuses this platform or its settings: " + complaint(o));
  }
  throw InputError(spec.origin + "/" + echo(o.step, 60), "SimGrid refuses it: " + complaint(o));
}

}  // namespace dts::sim
