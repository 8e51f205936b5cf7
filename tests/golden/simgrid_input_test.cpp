// The SimGrid side of the input end to end, through the dtsim binary: a platform's simgrid_config items, the
// --cfg/--log arguments and a platform XML file are read by SimGrid, which aborts on some bad values. `run
// --check` and a run's own pre-run check refuse them with exit 2, naming the key or argument, and the run writes
// nothing.
#include <catch2/catch.hpp>

#include "tests/data/idx_writer.hpp"
#include "tests/golden/cli_harness.hpp"

namespace fs = std::filesystem;
using Catch::Contains;
using dts::data::testing::TempDir;
using dts::test::run_dtsim;
using dts::test::tiny_experiment;
using dts::test::write_json;

namespace {

nlohmann::json plain_experiment() {
  auto e = tiny_experiment();
  e.erase("variants");
  e["run"] = {{"steps", 4}, {"log_every_steps", 2}};
  return e;
}

// Runs `args` with --check, then for real: both exit 2 with `expected` in the message, and nothing is written.
template <typename Matcher>
void require_refused(const TempDir& tmp, const std::string& args, const Matcher& expected) {
  const auto c = run_dtsim("run " + args + " --check", tmp / "");
  INFO("--check: " << c.err);
  REQUIRE(c.code == 2);
  REQUIRE_THAT(c.err, expected);
  const auto r = run_dtsim("run " + args + " --out " + (tmp / "out").string(), tmp / "");
  INFO("run: " << r.err);
  REQUIRE(r.code == 2);
  REQUIRE_THAT(r.err, expected);
  REQUIRE(!fs::exists(tmp / "out"));
}

std::string xml_platform(const std::string& host_a, const std::string& host_b) {
  return R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <host id=")" +
         host_a + R"(" speed="1Gf"/>
    <host id=")" +
         host_b + R"(" speed="1Gf"/>
    <link id="wire" bandwidth="100Mbps" latency="200us"/>
    <route src=")" +
         host_a + R"(" dst=")" + host_b + R"("><link_ctn id="wire"/></route>
  </zone>
</platform>
)";
}

}  // namespace

TEST_CASE("dtsim run: a simgrid_config item SimGrid refuses is an input error naming the key", "[golden]") {
  TempDir tmp;
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"network/latency-factor", "abc"}}, "/platform/simgrid_config/network/latency-factor"},  // not a number
      {{{"network/latency_factor", "1"}}, "/platform/simgrid_config/network/latency_factor"},    // no such option
      {{{"network/latency-factor", "1,2"}}, "/platform/simgrid_config/network/latency-factor"},  // two items
      {{{"contexts/synchro", "bogus"}}, "/platform/simgrid_config/contexts/synchro"},            // SimGrid aborts
      {{{"network/model", "help"}}, "/platform/simgrid_config/network/model"},                   // SimGrid exits 0
  };
  for (const auto& [cfg, key] : cases) {
    auto e = plain_experiment();
    e["platform"]["simgrid_config"] = cfg;
    write_json(tmp / "cfg.json", e);
    INFO(cfg.dump());
    require_refused(tmp, (tmp / "cfg.json").string(), Contains("cfg.json:" + key));
  }
  // Read by SimGrid only at the first message: named by the platform.
  auto e = plain_experiment();
  e["platform"]["network_model"] = "SMPI";
  e["platform"]["simgrid_config"] = {{"smpi/bw-factor", "garbage"}};
  write_json(tmp / "smpi.json", e);
  require_refused(tmp, (tmp / "smpi.json").string(), Contains("smpi.json:/platform: ") && Contains("garbage"));
}

TEST_CASE("dtsim run: a --cfg or --log argument SimGrid refuses is an input error naming it", "[golden]") {
  TempDir tmp;
  write_json(tmp / "tiny.json", plain_experiment());
  const std::string exp = (tmp / "tiny.json").string();
  require_refused(tmp, exp + " --cfg=network/latency-factor:abc", Contains("--cfg=network/latency-factor:abc: "));
  // The first good, the second not: the second is named.
  require_refused(tmp, exp + " --cfg=network/latency-factor:2 --cfg=contexts/factory:bogus",
                  Contains("--cfg=contexts/factory:bogus: ") && Contains("factory"));
  require_refused(tmp, exp + " --log=no-such-syntax", Contains("--log=no-such-syntax: "));
  const auto ok = run_dtsim("run " + exp + " --check --cfg=network/latency-factor:2 --log=dts.thres:warning", tmp / "");
  INFO(ok.err);
  REQUIRE(ok.code == 0);
}

TEST_CASE("dtsim run: a platform XML file SimGrid cannot load is an input error naming it", "[golden]") {
  TempDir tmp;
  auto e = plain_experiment();
  e["algorithm"]["workers"] = 2;
  e["platform"] = {{"topology", "xml"}, {"xml", "bad.xml"}, {"device", {{"peak_flops", 1e11}, {"mem_bw_Bps", 1e10}}}};
  std::string bad = xml_platform("a", "b");
  bad.replace(bad.find("</zone>"), 7, "</zon>");
  std::ofstream(tmp / "bad.xml") << bad;
  write_json(tmp / "xml.json", e);
  require_refused(tmp, (tmp / "xml.json").string(), Contains("xml.json:/platform/xml: ") && Contains("bad.xml"));

  // Loaded by SimGrid, but a run aborts at the first use of a host with no speed or a link with no bandwidth.
  std::string slow = xml_platform("a", "b");
  slow.replace(slow.find("speed=\"1Gf\""), 11, "speed=\"0f\"");
  std::ofstream(tmp / "slow.xml") << slow;
  e["platform"]["xml"] = "slow.xml";
  write_json(tmp / "slow.json", e);
  require_refused(tmp, (tmp / "slow.json").string(), Contains("slow.json:/platform/xml: ") && Contains("host 'a'"));

  std::ofstream(tmp / "lib.so") << "not a library";
  e["platform"]["xml"] = "lib.so";
  write_json(tmp / "so.json", e);
  require_refused(tmp, (tmp / "so.json").string(), Contains("so.json:/platform/xml: "));

  // Host names with more digits than an integer holds are sorted, not an error; the run completes.
  std::ofstream(tmp / "good.xml") << xml_platform("n-7", "n-123456789012345678901234567890");
  e["platform"]["xml"] = "good.xml";
  write_json(tmp / "good.json", e);
  const auto r = run_dtsim("run " + (tmp / "good.json").string() + " --out " + (tmp / "out").string(), tmp / "");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(fs::exists(tmp / "out" / "summary.json"));
}
