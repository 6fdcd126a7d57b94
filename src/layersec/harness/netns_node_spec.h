// The spec codec of one netns scenario node (netns_node.h): the node's
// description (NetnsNodeSpec), written by the orchestrator
// (netns_scenarios.h) as JSON and read back by `layersec bench scenario-node
// --spec FILE`, and the node's report (NetnsNodeReport), written by the node
// before it exits and read back by the orchestrator. Pure data and JSON: no
// I/O, no clock.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layersec/base/time.h"
#include "layersec/harness/scenario_layout.h"
#include "layersec/harness/testbed.h"  // Security, KeyDistribution
#include "layersec/net/frame.h"

namespace layersec::harness {

// The SOME/IP service every scenario node offers or uses (the testbed's);
// node certificates authorise it (and the key-management service).
inline constexpr std::uint16_t kNetnsScenarioService = layout::kService;

enum class LinkPath : std::uint8_t { kKernel, kRaw };
[[nodiscard]] std::string to_string(LinkPath p);  // "kernel", "raw"

struct NetnsPeer {
  std::string name;         // "publisher", "subscriber-3"
  net::Ipv4Address ip;
  net::MacAddress mac;      // of its veth
};

struct NetnsNodeSpec {
  std::string role = "publisher";  // "publisher" | "subscriber"
  int index = 0;                   // subscriber index 0..subscribers-1 (publisher: 0)
  int subscribers = 1;
  LinkPath path = LinkPath::kKernel;
  Security security = Security::kNone;
  KeyDistribution keys = KeyDistribution::kNone;  // kNone, kPsk or kRsaModeB
  bool multicast = false;
  std::size_t payload_bytes = 64;  // >= 16
  std::string interface = "eth0";
  net::Ipv4Address ip;             // this node's address (/24)
  net::MacAddress mac;             // this node's veth MAC
  std::vector<NetnsPeer> peers;    // every other node
  net::Ipv4Address publisher_ip;

  std::string secoc_key_file;      // psk: 32-byte CMAC-AES-256 key, mode 0600
  std::string macsec_key_file;     // hybrid: 16-byte SAK, mode 0600
  std::string ca_cert_file;        // rsa-mode-b: the CA certificate (PEM)
  std::string cert_file;           // rsa-mode-b: this node's certificate (PEM)
  std::string key_file;            // rsa-mode-b: this node's private key (PEM, 0600)

  std::string mode = "closed-loop";  // "closed-loop" | "rate"
  int iterations = 500;
  int warmup = 20;
  Duration pacing = Duration::milliseconds(1);  // closed loop: gap between iterations
  Duration timeout = Duration::seconds(1);      // closed loop: per iteration
  double rate_hz = 0;                           // rate mode
  Duration rate_duration = Duration::seconds(1);
  Duration ready_timeout = Duration::seconds(15);

  std::string report_file;  // NetnsNodeReport JSON, written before exit
};
// Every field, by the names node_spec_from_json reads.
[[nodiscard]] nlohmann::json to_json(const NetnsNodeSpec& s);
// Reading a spec or report is a start-up step: a problem throws
// NetnsJsonError, whose message names the JSON field ("/payload_bytes: ...").
class NetnsJsonError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};
// Reads and validates a spec (validate_node_spec); throws NetnsJsonError.
[[nodiscard]] NetnsNodeSpec node_spec_from_json(const nlohmann::json& j);
// Why `s` cannot run ("field: reason"), or "" when it can: ranges, and the
// key files and keys that its security and key distribution need.
[[nodiscard]] std::string validate_node_spec(const NetnsNodeSpec& s);

struct NetnsNodeReport {
  std::string role;
  int index = 0;
  bool ok = false;
  std::string error;  // why not ok ("" when ok)

  // publisher, closed loop (ns, in iteration order, completed ones only)
  std::vector<std::int64_t> half_rtt_ns;
  std::vector<std::int64_t> one_way_ns;  // publisher: to the last subscriber; subscriber: per event
  std::uint64_t iterations_completed = 0;
  std::uint64_t timeouts = 0;
  // rate mode
  std::uint64_t sent = 0;       // publisher: events sent in the rate phase
  std::uint64_t received = 0;   // subscriber: rate-phase events received
  std::uint64_t lost = 0;       // subscriber: sequence gaps in the rate phase
  double achieved_rate_hz = 0;  // publisher: sent / rate-phase wall time

  // costs
  std::uint64_t secoc_protect_ns = 0;  // runtime call-site timing (RuntimeConfig::cost_clock)
  std::uint64_t secoc_verify_ns = 0;
  std::uint64_t secoc_protected = 0;
  std::uint64_t secoc_verified = 0;
  std::uint64_t cpu_ns = 0;            // process CPU over the measured phase
  std::uint64_t wall_ns = 0;           // wall time of the measured phase
  std::uint64_t rss_kib = 0;           // peak RSS
  std::uint64_t security_rejections = 0;  // SecOC rejections + MACsec drops
  std::optional<std::int64_t> establishment_ns;  // publisher, rsa-mode-b: start -> every member keyed
  nlohmann::json transport;            // the transport's / MACsec link's counters

  // Readiness (publisher): closed-loop probes sent, and the time from the
  // runtime's start to the first complete probe (absent when never ready).
  std::uint64_t ready_probes = 0;
  std::optional<std::int64_t> ready_ns;
};
// Every field, by the names node_report_from_json reads.
[[nodiscard]] nlohmann::json to_json(const NetnsNodeReport& r);
[[nodiscard]] NetnsNodeReport node_report_from_json(const nlohmann::json& j);  // throws NetnsJsonError

}  // namespace layersec::harness
