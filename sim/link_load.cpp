// LinkLoadProbe: SimGrid's per-interval link usage as a share of bandwidth.
#include "sim/link_load.hpp"

#include "core/errors.hpp"

namespace sg4 = simgrid::s4u;

namespace dts::sim {
namespace {

// SimGrid 3.32's time-advance signal has no way to disconnect: one callback for the process, pointed at the
// probe of the moment.
LinkLoadProbe* g_probe = nullptr;

}  // namespace

LinkLoadProbe::LinkLoadProbe(SpanSink& sink) : sink_(sink), links_(sg4::Engine::get_instance()->get_all_links()) {
  DTS_ASSERT(g_probe == nullptr, "one link-load probe at a time");
  last_.assign(links_.size(), -1);
  static const bool connected = [] {
    sg4::Engine::on_time_advance_cb([](double delta_s) {
      if (g_probe != nullptr) g_probe->advanced(delta_s);
    });
    return true;
  }();
  (void)connected;
  g_probe = this;
}

LinkLoadProbe::~LinkLoadProbe() { g_probe = nullptr; }

void LinkLoadProbe::advanced(double delta_s) {
  const double begin_s = sg4::Engine::get_clock() - delta_s;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const sg4::Link& link = *links_[i];
    const double share = link.get_bandwidth() > 0 ? link.get_usage() / link.get_bandwidth() : 0;
    if (share == last_[i]) continue;
    if (last_[i] < 0 && begin_s > 0) sink_.link_load(link.get_name(), 0, 0);  // idle until now
    sink_.link_load(link.get_name(), begin_s, share);
    last_[i] = share;
  }
}

}  // namespace dts::sim
