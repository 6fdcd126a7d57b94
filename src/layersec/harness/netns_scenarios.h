// `layersec bench scenarios --topology netns`: every node its own process
// (`layersec bench scenario-node`, harness/netns_node.h) in its own network
// namespace, joined by veth pairs to a Linux bridge (net::NetnsTopology::star),
// on both link paths (kernel UDP sockets, with MACsec through a TAP when
// enabled; the integrated raw AF_PACKET path), each compared with the
// unsecured row of the same path. Needs root; builds and removes its own
// namespaces.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/harness/netns_node.h"
#include "layersec/harness/netns_scenario_keys.h"
#include "layersec/harness/results.h"
#include "layersec/harness/scenario.h"
#include "layersec/net/netns.h"

namespace layersec::harness {

struct NetnsScenarioOptions {
  std::string node_program;   // the layersec binary (default: /proc/self/exe)
  std::vector<LinkPath> paths = {LinkPath::kKernel, LinkPath::kRaw};
  std::string work_dir;       // specs, key files, reports, node logs (default: a fresh temp dir, removed after)
  bool keep_work_dir = false;
};

// Runs the netns sweep for `options` (iterations, groups, payloads, quick, json/out as for the
// sim topology). Returns the exit status; prints a clear reason and returns 2 when namespaces
// are unavailable (not root, no `ip`).
int run_netns_scenarios(const BenchScenarioOptions& options, const NetnsScenarioOptions& netns, std::ostream& out,
                        std::ostream& err);

// --- the pieces of a run (pure, exposed for tests; no root needed) -----------

// One row of the netns sweep: what to run and how it is named.
struct NetnsScenario {
  std::string name;      // "hybrid-psk-multicast@raw", "rate-5000-unsecured@kernel", ...
  std::string series;    // "paper-scenarios", "payload", "group-size", "rate"
  std::string paper_id;  // "3a-B" for the paper's sub-scenarios, else ""
  std::string label;
  std::string baseline;  // name of the same-path unsecured row this one is compared with
  LinkPath path = LinkPath::kKernel;
  Security security = Security::kNone;
  KeyDistribution keys = KeyDistribution::kNone;  // kNone, kPsk or kRsaModeB
  int subscribers = 1;
  bool multicast = false;
  std::size_t payload_bytes = 64;
  std::string mode = "closed-loop";  // "closed-loop" | "rate"
  int iterations = 200;
  int warmup = 20;
  Duration pacing = Duration::milliseconds(1);
  Duration timeout = Duration::seconds(1);
  double rate_hz = 0;  // rate mode
  Duration rate_duration = Duration::seconds(1);
};

// "netns-kernel" / "netns-raw": the ScenarioResult topology of a path.
[[nodiscard]] std::string netns_topology_name(LinkPath p);
// Parses "kernel" / "raw"; nullopt otherwise.
[[nodiscard]] std::optional<LinkPath> link_path_from_string(std::string_view s);

// Group sizes of a netns run: options.group_sizes, else 2, 4, 8, 16 (quick: 2, 4).
[[nodiscard]] std::vector<int> netns_group_sizes(const BenchScenarioOptions& options);
// Target rates of the saturation sweep, events/s, ascending:
// 1k, 2k, 5k, 10k, 20k, 50k, 100k (quick: 1k, 5k).
[[nodiscard]] std::vector<double> netns_rate_steps(bool quick);

// The closed-loop rows of one path, in run order: the paper's ten
// sub-scenarios, the payload sweep and the group sizes (unsecured and
// Hybrid-PSK multicast). Every name carries "@path".
[[nodiscard]] std::vector<NetnsScenario> netns_closed_loop_scenarios(const BenchScenarioOptions& options,
                                                                     LinkPath path);
// One step of the rate sweep (multicast, N = 2) for `security` (kNone or
// kHybrid with PSK): name "rate-<hz>-unsecured@path" / "rate-<hz>-hybrid-psk@path".
[[nodiscard]] NetnsScenario netns_rate_scenario(const BenchScenarioOptions& options, LinkPath path,
                                                Security security, double rate_hz);

// The node specs of one scenario over `nodes` (node 0 the publisher, node
// i the subscriber with index i - 1; nodes.size() == subscribers + 1):
// addresses and MACs from the topology, every other node as a peer, key
// files from `keys`, report files "<dir>/<role>[-i].report.json".
// Throws std::invalid_argument when the node count or keys do not fit.
[[nodiscard]] std::vector<NetnsNodeSpec> netns_node_specs(const NetnsScenario& scenario,
                                                          const std::vector<net::NetnsNode>& nodes,
                                                          const NetnsKeyFiles& keys, const std::string& dir);

}  // namespace layersec::harness
