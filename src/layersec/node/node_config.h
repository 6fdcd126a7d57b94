// JSON configuration of one SOME/IP node (`layersec node --config FILE`).
//
// The schema is close to vsomeip's ("unicast", "network", "service-discovery",
// "services" with "unreliable" ports, "events" and "eventgroups" with
// "multicast" and "threshold", "clients"); numbers may be JSON numbers or
// strings ("0x1234" hex, "30509" decimal) and booleans may be true/false or
// "true"/"false", as vsomeip allows. Our additions: methods and versions per
// service, eventgroups per client, a "secoc" section (the SecOC engine JSON of
// secoc/config.h plus bindings, key files and the state file) and a "test"
// section (methods to serve, events to publish, requests to send). Every key
// is documented in docs/node.md.
//
// Loading is a start-up step: any problem throws NodeConfigError whose path()
// is the JSON path of the offending value ("$.services[1].eventgroups[0]
// .multicast.address") and whose what() is "path: problem". Key files are read
// here (base/keyfile.h: refused unless mode 0600/0400, owned by us, not a
// symlink); key bytes never appear in a message. Relative key and state file
// paths are resolved against the configuration file's directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "layersec/base/secret.h"
#include "layersec/base/time.h"
#include "layersec/macsec/link_config.h"
#include "layersec/macsec/link_tsn_config.h"
#include "layersec/net/frame.h"
#include "layersec/secoc/config.h"
#include "layersec/someip/address.h"
#include "layersec/someip/message.h"
#include "layersec/someip/runtime.h"

namespace layersec::node {

class NodeConfigError : public std::runtime_error {
 public:
  NodeConfigError(const std::string& path, const std::string& problem)
      : std::runtime_error(path + ": " + problem), path_(path), problem_(problem) {}
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
};

// --- "secoc" --------------------------------------------------------------

// DataId of the SD PDUs added when "$.secoc.sd" names a key group (or is
// absent): one DataId for every node on the segment (the source address is
// authenticated with each SD message).
inline constexpr std::uint16_t kDefaultSdDataId = 0xFFF0;

// One key file: the current key of a key group, loaded at configuration time.
struct NodeKey {
  std::uint32_t group = 0;  // index into engine.key_groups
  std::string group_name;
  std::uint32_t key_id = 1;  // printed instead of the key
  std::string path;          // resolved path (for diagnostics; never the key)
  SecretBytes key;
};

struct NodeSecoc {
  secoc::EngineConfig engine;  // "$.secoc.engine", validated
  someip::SecocBindings bindings;  // "$.secoc.bindings", "$.secoc.sd", "$.secoc.sync"
  std::vector<NodeKey> keys;   // one per key group, every group covered
  std::string state_file;      // FileStateStore path (trip counter, sync floors)
};

// --- "test": what the node application does ----------------------------------

enum class ReplyKind : std::uint8_t {
  kEcho,   // reply with the request's payload
  kFixed,  // reply with a configured payload
  kError,  // reply with an ERROR message carrying `code`
};

struct TestServe {
  std::uint16_t service = 0;
  std::uint16_t instance = 0;
  std::uint16_t method = 0;
  ReplyKind reply = ReplyKind::kEcho;
  std::vector<std::uint8_t> payload;  // kFixed
  someip::ReturnCode code = someip::ReturnCode::kNotOk;  // kError
};

// Notifications of one event at a fixed interval. Payload: `payload_size`
// bytes; the first min(4, size) bytes carry a big-endian sequence number
// starting at 1, the rest is 0xA5 filler. Fields are published with
// set_field (stored value), plain events with notify.
struct TestPublish {
  std::uint16_t service = 0;
  std::uint16_t instance = 0;
  std::uint16_t event = 0;
  Duration interval = Duration::milliseconds(1000);
  std::size_t payload_size = 8;
  std::uint64_t count = 0;  // 0 = until the node stops
};

// Requests to a required service at a fixed interval, sent while the service
// is available. Payload: `payload` when given, else `payload_size` bytes with
// a big-endian sequence number in front (as TestPublish).
struct TestRequest {
  std::uint16_t service = 0;
  std::uint16_t instance = 0;  // the client's configured instance (0xFFFF: any)
  std::uint16_t method = 0;
  Duration interval = Duration::milliseconds(1000);
  std::optional<std::vector<std::uint8_t>> payload;
  std::size_t payload_size = 8;
  std::uint64_t count = 0;  // 0 = until the node stops
  std::optional<Duration> timeout;  // default: runtime request_timeout
  bool fire_and_forget = false;
};

struct NodeTest {
  std::vector<TestServe> serve;
  std::vector<TestPublish> publish;
  std::vector<TestRequest> requests;
};

// --- "raw" and "tsn": the AF_PACKET transport and its TSN first hop -------------

// "$.raw": the node frames Ethernet/IPv4/UDP itself on `interface`
// (someip::RawTransport) instead of using kernel UDP sockets. The interface
// should carry no address of its own (docs/node.md).
struct NodeRaw {
  std::string interface;
  std::map<net::Ipv4Address, net::MacAddress> neighbours;  // static next hops (no ARP)
  std::size_t mtu = 1500;
};

// "$.macsec" (raw transport only): the raw transport's SecY, from a
// `layersec macsec up --config` file (key files read here, mode 0600). A
// missing PN state file is created only on `--first-start` (as `macsec up
// --new-key`): a flag in the file would stay set and, once the state file is
// lost, restart the SAKs' PNs (GCM nonces) from 1.
struct NodeMacsec {
  std::string path;          // the link configuration file, resolved
  macsec::LinkConfig link;   // its SAKs are SecretBytes
};

// --- the node -------------------------------------------------------------------

struct NodeConfig {
  someip::IpAddress unicast;  // "unicast": the node's IPv4 address
  std::string device;  // "device": optional interface to bind to
  someip::RuntimeConfig runtime;
  std::optional<NodeSecoc> secoc;
  std::optional<NodeRaw> raw;
  std::optional<NodeMacsec> macsec;
  // "$.tsn" (raw transport only): the `macsec up --tsn` format
  // (macsec/link_tsn_config.h); errors name "$.tsn.<path>". Its layout
  // (clear-tag or standard) is the SecY's when there is a "macsec" section.
  std::optional<macsec::LinkTsnConfig> tsn;
  NodeTest test;
  // vsomeip keys that were accepted and ignored ("$.logging", ...), so a
  // caller can say so.
  std::vector<std::string> ignored;
};

// Parses a configuration document. `base_dir` resolves relative key and state
// file paths ("" = the current directory). Throws NodeConfigError.
NodeConfig node_config_from_json(const nlohmann::json& j, const std::string& base_dir = "");
// Reads and parses FILE (JSON syntax errors name the file, line and column).
NodeConfig load_node_config(const std::string& path);

// A vsomeip-style unsigned number: a JSON unsigned integer, or a string of
// decimal digits or "0x"/"0X" and hex digits. Throws NodeConfigError(path)
// when the value is something else or above `max`.
std::uint64_t parse_config_uint(const nlohmann::json& v, const std::string& path,
                                std::uint64_t max);
// true/false, or the strings "true"/"false". Throws NodeConfigError(path).
bool parse_config_bool(const nlohmann::json& v, const std::string& path);

}  // namespace layersec::node
