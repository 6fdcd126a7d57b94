// Configuration of a SOME/IP runtime (runtime.h): the services a node offers
// and uses, and the SecOC binding of their message ids; plus the checks and
// lookups every part of the runtime shares. Plain data, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/someip/address.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_types.h"

namespace layersec::someip {

struct EventConfig {
  std::uint16_t event_id = 0;      // 0x8000..0xFFFE
  std::vector<std::uint16_t> eventgroups;
  bool is_field = false;           // has a stored value sent to new subscribers
  std::optional<std::uint16_t> getter_method;  // fields: method returning the value
  std::optional<std::uint16_t> setter_method;  // fields: method setting and notifying
};

struct EventgroupConfig {
  std::uint16_t eventgroup_id = 0;
  std::optional<Endpoint> multicast;  // group address:port for notifications
  // Notifications go to `multicast` once the eventgroup has at least this
  // many subscribers (vsomeip's "threshold"); 0 = always multicast when
  // configured, 1 = same, N = unicast below N subscribers.
  std::size_t multicast_threshold = 1;
  // Source addresses allowed to subscribe; empty = any host. Others get a
  // Nack (SdDropReason::kSubscriberNotAllowed).
  std::vector<IpAddress> allowed_subscribers{};
};

struct MethodConfig {
  std::uint16_t method_id = 0;  // 0x0000..0x7FFF
  bool fire_and_forget = false;
};

// A service instance this node offers.
struct ServiceConfig {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 1;
  std::uint8_t major_version = 1;
  std::uint32_t minor_version = 0;
  std::uint16_t udp_port = 0;  // where requests arrive and events are sent from
  std::vector<MethodConfig> methods;
  std::vector<EventConfig> events;
  std::vector<EventgroupConfig> eventgroups;
};

// A service instance this node uses.
struct ClientConfig {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0xFFFF;  // 0xFFFF: any
  std::uint8_t major_version = 0xFF;   // 0xFF: any
  std::uint16_t udp_port = 0;  // local port for responses and unicast events (0: the node's client port)
  std::vector<std::uint16_t> eventgroups;
  // Addresses whose offers of this service are accepted; empty = any host.
  // Others are ignored (SdDropReason::kOfferServerNotAllowed).
  std::vector<IpAddress> allowed_servers{};
};

struct RuntimeConfig {
  std::string name;                     // diagnostics
  std::uint16_t client_id = 0x0001;     // Request ID high half of our requests
  std::uint16_t client_port = 30501;    // default local port of client traffic
  bool sd_enabled = true;
  std::uint16_t sd_port = kSdPort;
  Endpoint sd_multicast{IpAddress::v4(224, 224, 224, 245), kSdPort, L4Proto::kUdp};
  SdTiming sd_timing;
  Duration request_timeout = Duration::seconds(1);  // default for request()
  std::size_t max_message_size = 65536;  // largest reassembled SOME/IP-TP payload
  Duration tp_reassembly_timeout = Duration::milliseconds(500);
  std::size_t tp_segment_size = 1392;   // bytes per TP segment (multiple of 16)
  std::size_t max_pending_requests = 1024;
  // When set, every SecOC protect and verify of a message (not SD) is timed
  // at its call site on this clock (RuntimeCounters::secoc_*_ns): two clock
  // reads per call, so unset by default; the scenario harness passes a
  // MonotonicClock. Not owned; must outlive the runtime.
  const Clock* cost_clock = nullptr;
  std::vector<ServiceConfig> services;  // offered
  std::vector<ClientConfig> clients;    // required
};

// What the SecOC MAC of a bound message covers besides the payload.
enum class HeaderAuth : std::uint8_t {
  kSomeipHeader,  // DataId || header (all fields but length) || payload || FV (default)
  kPayloadOnly,   // AUTOSAR DataId || payload || FV: header unauthenticated (interop only)
};
[[nodiscard]] std::string_view to_string(HeaderAuth h);

// SecOC binding of one SOME/IP message id.
struct SecocBinding {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0xFFFF;  // 0xFFFF: every instance
  std::uint16_t method_or_event = 0;
  std::optional<std::uint32_t> tx_pdu;  // protect what we send with this PDU
  std::optional<std::uint32_t> rx_pdu;  // verify what we receive with this PDU
};

// One message id (of SecocBindings::unprotected or ::payload_only).
struct MessageRef {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0xFFFF;  // 0xFFFF: every instance
  std::uint16_t method_or_event = 0;
};

struct SecocBindings {
  std::vector<SecocBinding> messages;
  // What every bound message authenticates besides its payload ...
  HeaderAuth header = HeaderAuth::kSomeipHeader;
  // ... except these bound ids, which use the AUTOSAR payload-only layout
  // (per-message interoperability with a peer that does not bind the header).
  std::vector<MessageRef> payload_only;
  // Ids of SecOC services deliberately sent and accepted without SecOC.
  std::vector<MessageRef> unprotected;
  // SD protection (the whole SD payload is the Authentic I-PDU); both PDUs
  // must use timestamp freshness. With message bindings and no SD PDUs,
  // attach_secoc throws unless sd_unprotected is set explicitly.
  std::optional<std::uint32_t> sd_tx_pdu;
  std::optional<std::uint32_t> sd_rx_pdu;
  bool sd_unprotected = false;
  // Where SecOC sync messages are sent (notifications of this event to its
  // eventgroup's subscribers) and received (sync channel = rx id in the
  // engine's syncRx table).
  std::optional<std::uint16_t> sync_service;
  std::uint16_t sync_instance = 1;
  std::uint16_t sync_event = 0;
  std::uint32_t sync_rx_channel = 0;
};

// Throws std::invalid_argument("someip runtime configuration: ...") naming
// the first inconsistent item (reserved or duplicate ids, an event in an
// unknown eventgroup, a port clash with SD, limits out of range, ...).
void validate_config(const RuntimeConfig& config);

// The local UDP port of a required service (its own, or the node's client port).
[[nodiscard]] std::uint16_t client_port(const RuntimeConfig& config, const ClientConfig& client);

// What kind of method `method` is on service `s` (field getters and setters
// are request/response methods); kNone if the service has no such method.
[[nodiscard]] MethodKind method_kind(const ServiceConfig& s, std::uint16_t method);

// The eventgroup `id` of `s`, or null.
[[nodiscard]] const EventgroupConfig* find_eventgroup(const ServiceConfig& s, std::uint16_t id);

namespace detail {
// "0x1234": ids in the runtime's configuration error messages.
[[nodiscard]] std::string hex16(std::uint16_t v);
}  // namespace detail

}  // namespace layersec::someip
