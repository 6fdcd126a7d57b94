#include "layersec/harness/scenario.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace layersec::harness {

namespace {

// What distinguishes one spec from another; everything else keeps the
// ScenarioSpec / TestbedOptions defaults.
struct SpecParams {
  std::string name;
  std::string series;
  std::string paper_id;
  std::string label;
  Security security = Security::kNone;
  KeyDistribution keys = KeyDistribution::kNone;
  int subscribers = 1;
  bool multicast = false;
  std::size_t payload = 64;
};

// The one spec builder of every set below.
ScenarioSpec make_spec(SpecParams p, int iterations, std::uint64_t seed) {
  ScenarioSpec s;
  s.name = std::move(p.name);
  s.series = std::move(p.series);
  s.paper_id = std::move(p.paper_id);
  s.label = std::move(p.label);
  s.testbed.security = p.security;
  s.testbed.keys = p.keys;
  s.testbed.subscribers = p.subscribers;
  s.testbed.multicast = p.multicast;
  s.testbed.payload_bytes = p.payload;
  s.testbed.seed = seed;
  s.iterations = iterations;
  return s;
}

}  // namespace

const std::vector<PaperConfiguration>& paper_configurations() {
  static const std::vector<PaperConfiguration> rows = {
      {"1", "unsecured", "Unsecured", Security::kNone, KeyDistribution::kNone},
      {"2a", "secoc-psk", "SecOC-PSK", Security::kSecoc, KeyDistribution::kPsk},
      {"2b", "secoc-rsa", "SecOC-RSA", Security::kSecoc, KeyDistribution::kRsaModeB},
      {"3a", "hybrid-psk", "Hybrid-PSK", Security::kHybrid, KeyDistribution::kPsk},
      {"3b", "hybrid-rsa", "Hybrid-RSA", Security::kHybrid, KeyDistribution::kRsaModeB},
  };
  return rows;
}

std::vector<ScenarioSpec> paper_scenario_specs(int iterations, std::uint64_t seed, std::size_t payload_bytes) {
  std::vector<ScenarioSpec> out;
  std::uint64_t k = 0;
  for (const auto& r : paper_configurations()) {
    for (const bool multicast : {false, true}) {
      const std::string suffix = multicast ? "multicast" : "unicast";
      out.push_back(make_spec({std::string(r.name) + "-" + suffix, "paper-scenarios",
                               std::string(r.id) + (multicast ? "-B" : "-A"),
                               std::string(r.label) + (multicast ? " Multicast" : " Unicast"), r.security, r.keys,
                               multicast ? 2 : 1, multicast, payload_bytes},
                              iterations, seed + (k++)));
    }
  }
  return out;
}

std::vector<ScenarioSpec> group_size_specs(const std::vector<int>& sizes, int iterations, std::uint64_t seed,
                                           bool hybrid_only) {
  std::vector<ScenarioSpec> out;
  std::uint64_t k = 100;
  for (int n : sizes) {
    const std::string ns = std::to_string(n);
    out.push_back(make_spec({"group-hybrid-psk-n" + ns, "group-size", "", "Hybrid-PSK multicast, N=" + ns,
                             Security::kHybrid, KeyDistribution::kPsk, n, true, 64},
                            iterations, seed + (k++)));
    if (!hybrid_only) {
      out.push_back(make_spec({"group-unsecured-n" + ns, "group-size", "", "Unsecured multicast, N=" + ns,
                               Security::kNone, KeyDistribution::kNone, n, true, 64},
                              iterations, seed + (k++)));
    }
  }
  return out;
}

std::vector<ScenarioSpec> bench_scenario_specs(const BenchScenarioOptions& o) {
  std::vector<ScenarioSpec> specs;
  std::uint64_t k = 0;
  auto add = [&](SpecParams p) -> ScenarioSpec& {
    specs.push_back(make_spec(std::move(p), o.iterations, o.seed + 10 * (k++)));
    return specs.back();
  };
  std::vector<std::size_t> payloads = o.payloads;
  if (payloads.empty())
    payloads = o.quick ? std::vector<std::size_t>{64, 1400} : std::vector<std::size_t>{64, 256, 512, 1024, 1400};
  std::vector<int> groups = o.group_sizes;
  if (groups.empty()) groups = o.quick ? std::vector<int>{2, 8} : std::vector<int>{2, 4, 8, 16, 32, 64};
  std::vector<double> loads = o.load_mbps;
  if (loads.empty()) loads = o.quick ? std::vector<double>{0, 200} : std::vector<double>{0, 100, 400};
  using Config = std::tuple<Security, KeyDistribution, const char*>;
  const Config unsecured{Security::kNone, KeyDistribution::kNone, "unsecured"};
  const Config secoc{Security::kSecoc, KeyDistribution::kPsk, "secoc-psk"};
  const Config hybrid{Security::kHybrid, KeyDistribution::kPsk, "hybrid-psk"};

  // Payload sweep (unicast): unsecured, SecOC and hybrid at each size.
  for (std::size_t p : payloads) {
    const std::string ps = std::to_string(p);
    add({"payload-" + ps + "-unsecured", "payload", "", "unsecured, " + ps + " B", Security::kNone,
         KeyDistribution::kNone, 1, false, p});
    add({"payload-" + ps + "-secoc-psk", "payload", "", "SecOC-PSK, " + ps + " B", Security::kSecoc,
         KeyDistribution::kPsk, 1, false, p});
    add({"payload-" + ps + "-hybrid-psk", "payload", "", "Hybrid-PSK, " + ps + " B", Security::kHybrid,
         KeyDistribution::kPsk, 1, false, p});
  }
  // SOME/IP-TP: 64 KiB events, segmented by the runtime, reassembled by the subscriber.
  if (o.tp) {
    const std::size_t tp = 65536 - 256;  // leaves room for the SecOC trailer within the runtime's limit
    for (const auto& [sec, keys, nm] : {unsecured, secoc, hybrid}) {
      add({std::string("tp-64k-") + nm, "someip-tp", "", std::string("SOME/IP-TP 64 KiB, ") + nm, sec, keys, 1,
           false, tp})
          .iterations = std::max(1, o.iterations / 4);
    }
  }
  // Group sizes with a group key distributed by Mode B (kex::GroupKeyManager).
  for (int n : groups) {
    const std::string ns = std::to_string(n);
    add({"group-n" + ns + "-unsecured", "group-size", "", "unsecured multicast, N=" + ns, Security::kNone,
         KeyDistribution::kNone, n, true, 64});
    add({"group-n" + ns + "-hybrid-group", "group-size", "", "hybrid, group key, N=" + ns, Security::kHybrid,
         KeyDistribution::kGroupModeB, n, true, 64});
  }
  // Background best-effort load towards every subscriber.
  for (double l : loads) {
    if (l <= 0) continue;
    const std::string ls = std::to_string(static_cast<int>(l));
    for (const auto& [sec, keys, nm] : {unsecured, hybrid}) {
      add({"load-" + ls + "mbps-" + nm, "background-load", "",
           std::string(nm) + ", multicast N=2, " + ls + " Mb/s best-effort load per subscriber", sec, keys, 2, true,
           64})
          .testbed.background_mbps = l;
    }
  }
  return specs;
}

int max_subscribers(const std::vector<ScenarioSpec>& specs) {
  int n = 2;
  for (const auto& s : specs) n = std::max(n, s.testbed.subscribers);
  return n;
}

}  // namespace layersec::harness
