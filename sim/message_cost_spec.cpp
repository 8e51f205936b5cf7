// Reading the host-side cost keys of a platform, and the piecewise-linear overhead curve.
#include "sim/message_cost_spec.hpp"

#include <cmath>
#include <string>

namespace dts::sim {
namespace {

// Upper bounds: a figure beyond them is a unit mistake, not a machine.
constexpr double kMaxMinBytes = 1e15;
constexpr double kMaxPerMessageS = 10;
constexpr double kMaxPerByteS = 1e-3;  // 1 ms per byte: 1 KB/s

OverheadCurve read_curve(ConfigReader& r, const std::string& key) {
  const nlohmann::json& a = r.raw(key);
  if (!a.is_array()) r.fail(key, "expected an array of [min_bytes, a_s, b_s_per_byte] segments");
  OverheadCurve curve;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string at = key + "/" + std::to_string(i);
    const nlohmann::json& s = a[i];
    if (!s.is_array() || s.size() != 3) r.fail(at, "expected [min_bytes, a_s, b_s_per_byte], got " + echo_json(s));
    const char* names[] = {"min_bytes", "a_s", "b_s_per_byte"};
    const double hi[] = {kMaxMinBytes, kMaxPerMessageS, kMaxPerByteS};
    double v[3];
    for (std::size_t k = 0; k < 3; ++k) {
      const std::string field = at + "/" + std::to_string(k);
      if (!s[k].is_number()) r.fail(field, std::string(names[k]) + ": expected a number, got " + echo_json(s[k]));
      v[k] = s[k].get<double>();
      if (!std::isfinite(v[k]) || v[k] < 0 || v[k] > hi[k]) {
        r.fail(field, std::string(names[k]) + ": value " + echo_json(s[k]) + " out of range [0, " +
                          echo_json(nlohmann::json(hi[k])) + "]");
      }
    }
    if (!curve.empty() && v[0] <= curve.back().min_bytes) {
      r.fail(at + "/0", "min_bytes must increase from one segment to the next (segments sorted by size)");
    }
    curve.push_back({v[0], v[1], v[2]});
  }
  return curve;
}

nlohmann::json curve_json(const OverheadCurve& c) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : c) a.push_back({s.min_bytes, s.a_s, s.b_s_per_byte});
  return a;
}

}  // namespace

double overhead_s(const OverheadCurve& curve, double bytes) {
  const OverheadSegment* in = nullptr;
  for (const auto& s : curve) {
    if (bytes < s.min_bytes) break;
    in = &s;
  }
  return in == nullptr ? 0.0 : in->a_s + in->b_s_per_byte * bytes;
}

MessageOverhead read_message_overhead(ConfigReader& platform) {
  MessageOverhead o;
  if (!platform.has("message_overhead")) return o;
  ConfigReader r = platform.child("message_overhead");
  o.given = true;
  if (r.has("send")) o.send = read_curve(r, "send");
  o.isend = r.has("isend") ? read_curve(r, "isend") : o.send;
  if (r.has("recv")) o.recv = read_curve(r, "recv");
  r.finish();
  platform.resolved()["message_overhead"] = {
      {"send", curve_json(o.send)}, {"isend", curve_json(o.isend)}, {"recv", curve_json(o.recv)}};
  return o;
}

MessageNoise read_message_noise(ConfigReader& platform) {
  MessageNoise n;
  if (!platform.has("message_noise")) return n;
  ConfigReader r = platform.child("message_noise");
  n.given = true;
  r.choice("kind", "lognormal", {"lognormal"});
  n.sigma = r.require_number("sigma", 0, 3);
  r.finish();
  platform.resolved()["message_noise"] = r.resolved();
  return n;
}

NetworkStack read_network_stack(ConfigReader& platform) {
  NetworkStack n;
  if (!platform.has("network_stack")) return n;
  ConfigReader r = platform.child("network_stack");
  n.given = true;
  n.send_s_per_byte = r.number("send_s_per_byte", 0, 0, kMaxPerByteS);
  n.recv_s_per_byte = r.number("recv_s_per_byte", 0, 0, kMaxPerByteS);
  r.finish();
  platform.resolved()["network_stack"] = r.resolved();
  return n;
}

CopyModel read_copy_model(ConfigReader& node) {
  CopyModel c;
  if (!node.has("copy")) return c;
  ConfigReader r = node.child("copy");
  c.given = true;
  c.call_latency_s = r.number("call_latency_s", 0, 0, kMaxPerMessageS);
  c.pageable = r.boolean("pageable", false);
  c.batch_pageable = r.boolean("batch_pageable", c.pageable);
  if (c.pageable || c.batch_pageable) {
    c.staging_bandwidth_Bps = r.require_number("staging_bandwidth_Bps", 1e3, 1e15);
  } else if (r.has("staging_bandwidth_Bps")) {
    c.staging_bandwidth_Bps = r.number("staging_bandwidth_Bps", 0, 1e3, 1e15);  // kept for a fit to switch on
  }
  r.finish();
  node.resolved()["copy"] = r.resolved();
  return c;
}

}  // namespace dts::sim
