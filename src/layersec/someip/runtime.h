// Runtime: one SOME/IP node (an ECU's SOME/IP stack). It ties the codecs,
// the SD state machines (service_discovery.h), SOME/IP-TP and the error
// policy (error.h) to a Transport, and offers the application API:
//
//   server: offer_service(), set_method_handler(), notify() (unicast to each
//           subscriber, or once to the eventgroup's multicast address when
//           the subscriber count reaches multicast_threshold), fields
//           (set_field(): stored value, getter/setter methods, initial event
//           to each new subscriber);
//   client: request_service() (availability callback), subscribe() (event
//           callback), request() (response callback with timeout),
//           fire_and_forget().
//
// SecOC binding: every (service, instance, method or event) can be mapped to
// a SecOC Tx PDU (what this node sends) and an Rx PDU (what it accepts). The
// SOME/IP payload is the Authentic I-PDU: protection is applied after
// serialisation (the Secured I-PDU becomes the payload) and verified before
// dispatch; a message on a bound id that fails verification is dropped,
// counted and reported through the rejection callback, never delivered. A
// message on a bound id that arrives unprotected is the same failure (no
// fallback).
//
// What is authenticated (HeaderAuth::kSomeipHeader, the default): the MAC
// covers DataId || SOME/IP header || payload || FV, where the header part is
// Message ID (service, method/event), Request ID (client, session), protocol
// and interface version, message type (TP flag cleared) and return code -
// every header field but the length, which the Secured I-PDU changes. A
// relabelled client id, session id, message type or return code therefore
// fails verification. HeaderAuth::kPayloadOnly is the AUTOSAR layout
// (DataId || payload || FV) for interoperability with a SecOC stack that does
// not bind the header; the header is then unauthenticated.
//
// Fail closed: on a service that has any SecOC binding at this node, a
// message id without a binding is rejected and counted (never delivered,
// never answered) and is never sent unprotected, unless the configuration
// lists it in SecocBindings::unprotected.
//
// SD: with SecOC bindings, SD must be protected unless SecocBindings::
// sd_unprotected says otherwise (attach_secoc refuses the configuration
// instead of running with spoofable discovery). Protected SD uses timestamp freshness (no sync message needed,
// so it works from the first Offer), authenticates the SOME/IP header and the
// datagram's source address, and keeps replay state per source address.
// SecOC sync messages travel as SOME/IP notifications on a configured
// (service, instance, event) (SecocBindings::sync_*); a new subscriber to
// the sync eventgroup makes the sender start a new reset cycle at once, so a
// restarted receiver resumes without waiting for the next period.
//
// Freshness time: every time the runtime gives the SecOC engine comes from
// the freshness clock passed to attach_secoc (default: the transport's
// clock), which must be synchronised between the nodes (docs/secoc.md).
//
// Threading: single-threaded. Every call, every transport callback and every
// timer runs on the transport's thread (the simulator, or the EventLoop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/address.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_types.h"

namespace layersec::someip {

// --- transport ------------------------------------------------------------

enum class TransportError : std::uint8_t {
  kPortInUse,    // bind on a port already bound here
  kNotBound,     // send from a port not bound
  kTooLarge,     // datagram larger than the transport carries
  kUnreachable,  // no route / no address resolution
  kSystem,       // the OS refused (see the adapter's message)
};
[[nodiscard]] std::string_view to_string(TransportError e);

// What the runtime needs from the network: UDP ports on the node's unicast
// address, multicast group membership, a clock and one-shot timers.
// Adapters: SimTransport (net::SimHost on the simulated segment,
// someip/sim_transport.h) and SocketTransport (net::UdpSocket on an
// net::EventLoop, someip/socket_transport.h).
class Transport {
 public:
  struct Datagram {
    ByteSpan payload;      // valid only during the handler call
    Endpoint source;
    Endpoint destination;  // our unicast endpoint, or the group for multicast
    bool multicast = false;
  };
  using Handler = std::function<void(const Datagram&)>;
  using TimerCallback = std::function<void()>;

  virtual ~Transport() = default;
  [[nodiscard]] virtual IpAddress local_address() const = 0;
  // Receives every datagram sent to `port` on the unicast address.
  virtual Status<TransportError> bind(std::uint16_t port, Handler handler) = 0;
  // Receives datagrams sent to group.address:group.port (binding that port
  // for the group if needed).
  virtual Status<TransportError> join(const Endpoint& group, Handler handler) = 0;
  virtual void leave(const Endpoint& group) = 0;
  // Releases a port bound with bind() (its handler is dropped), so a new
  // runtime can bind it again on the same transport (node restart). The
  // default does nothing: such a transport cannot host a restarted runtime.
  virtual void unbind(std::uint16_t port) { (void)port; }
  virtual Status<TransportError> send(std::uint16_t from_port, const Endpoint& to,
                                      ByteSpan payload) = 0;
  [[nodiscard]] virtual TimePoint now() const = 0;
  // One pending wake-up: calls `cb` at (or soon after) `at`, replacing any
  // earlier request. TimePoint::max() cancels.
  virtual void wake_at(TimePoint at, TimerCallback cb) = 0;
};

// --- configuration --------------------------------------------------------

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
  // Time every SecOC protect and verify of a message at its call site on
  // CLOCK_MONOTONIC (RuntimeCounters::secoc_*_ns): two clock reads per call,
  // so off by default; the scenario harness turns it on.
  bool time_secoc = false;
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

// --- application API types --------------------------------------------------

enum class RuntimeError : std::uint8_t {
  kNotConfigured,   // service / method / event / eventgroup not in the configuration
  kNotAvailable,    // the required service is not available (no offer seen)
  kNotRunning,      // start() not called or stop() called
  kTooLarge,        // payload above max_message_size
  kTooManyPending,  // max_pending_requests reached
  kSecoc,           // protection failed (see counters)
  kTransport,       // the transport refused (see counters)
};
[[nodiscard]] std::string_view to_string(RuntimeError e);

struct Request {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint16_t method_id = 0;
  std::uint16_t client_id = 0;
  std::uint16_t session_id = 0;
  bool fire_and_forget = false;
  ByteSpan payload;  // valid during the handler call
  Endpoint source;
};

// The handler fills the reply; payload storage is reused between calls.
struct Reply {
  ReturnCode code = ReturnCode::kOk;  // not kOk: an ERROR message is sent
  std::vector<std::uint8_t> payload;
};
using MethodHandler = std::function<void(const Request&, Reply&)>;

struct Notification {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint16_t event_id = 0;
  bool multicast = false;
  ByteSpan payload;  // valid during the handler call
  Endpoint source;
};
using EventHandler = std::function<void(const Notification&)>;

struct ResponseResult {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint16_t method_id = 0;
  std::uint16_t session_id = 0;
  // kOk: a RESPONSE; other codes: the ERROR message's code; kTimeout: no
  // answer within the timeout (synthesised locally).
  ReturnCode code = ReturnCode::kOk;
  ByteSpan payload;  // valid during the handler call
};
using ResponseHandler = std::function<void(const ResponseResult&)>;

using AvailabilityHandler =
    std::function<void(std::uint16_t service, std::uint16_t instance, bool available)>;

// A message dropped by the security layer.
struct SecurityRejection {
  std::uint16_t service_id = 0;
  std::uint16_t instance_id = 0;
  std::uint16_t method_or_event = 0;
  bool sd = false;
  bool unprotected = false;  // bound id but no SecOC trailer could be parsed
  bool unbound = false;      // a SecOC service's message id with no binding (fail closed)
  secoc::Rejection reason = secoc::Rejection::kMalformed;
  Endpoint source;
};
using RejectionHandler = std::function<void(const SecurityRejection&)>;

struct RuntimeCounters {
  std::uint64_t datagrams_received = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t requests_served = 0;
  std::uint64_t responses_received = 0;
  std::uint64_t request_timeouts = 0;
  std::uint64_t late_responses = 0;          // response to no pending request: dropped
  std::uint64_t notifications_sent = 0;      // datagrams (a multicast counts once)
  std::uint64_t notifications_received = 0;
  std::uint64_t notifications_unsubscribed = 0;  // dropped: not subscribed
  std::uint64_t secoc_protected = 0;  // messages (SD counted apart)
  std::uint64_t secoc_verified = 0;
  std::uint64_t secoc_sd_protected = 0;  // SD datagrams
  std::uint64_t secoc_sd_verified = 0;
  std::uint64_t secoc_rejected = 0;
  std::uint64_t tp_segments_sent = 0;
  std::uint64_t tp_messages_reassembled = 0;
  std::uint64_t tp_rejected = 0;
  std::uint64_t transport_errors = 0;
  std::uint64_t secoc_protect_failed = 0;  // protect() refused (message not sent)
  std::uint64_t secoc_syncs_sent = 0;      // sync notifications (datagrams)
  std::uint64_t secoc_syncs_accepted = 0;  // sync messages the engine accepted
  std::uint64_t secoc_syncs_duplicate = 0;  // resends of the accepted cycle (no state change)
  std::uint64_t secoc_unbound_rejected = 0;  // received on a SecOC service without a binding
  std::uint64_t secoc_unbound_refused = 0;   // not sent: SecOC service, id without a binding
  std::uint64_t sd_datagrams_sent = 0;
  // With RuntimeConfig::time_secoc: CLOCK_MONOTONIC time inside the engine's
  // protect (sending) and verify (receiving) calls of messages (not SD), ns.
  std::uint64_t secoc_protect_ns = 0;
  std::uint64_t secoc_verify_ns = 0;
  RxCounters rx;  // error policy (drops by reason, errors sent)
  // SD entries the state machines refused (sender binding, allowlists,
  // Nacks), by reason; current as of the counters() call.
  SdDropCounters sd_dropped;
};

// --- the runtime ------------------------------------------------------------

class Runtime {
 public:
  // `transport` and `random` must outlive the runtime. Throws
  // std::invalid_argument for an inconsistent configuration (duplicate ids,
  // an event in an unknown eventgroup, ...), naming the item.
  Runtime(RuntimeConfig config, Transport& transport, RandomSource& random);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // SecOC: `engine` (and `freshness_clock`, if given) are not owned and must
  // outlive the runtime. Call before start(). Throws std::invalid_argument
  // for a binding to an unknown PDU, SD PDUs without timestamp freshness, or
  // message bindings without SD protection and without sd_unprotected.
  void attach_secoc(secoc::Engine& engine, SecocBindings bindings,
                    const Clock* freshness_clock = nullptr);

  // Binds the ports, joins the SD group, starts offering every configured
  // service and requesting every configured client service.
  Status<RuntimeError> start();
  // StopOffer / StopSubscribe go out; pending requests complete with
  // kNotReachable. Idempotent.
  void stop();
  [[nodiscard]] bool running() const;

  // --- server side ---
  Status<RuntimeError> set_method_handler(std::uint16_t service, std::uint16_t instance,
                                          std::uint16_t method, MethodHandler handler);
  // Sends one notification to the eventgroups the event belongs to.
  Status<RuntimeError> notify(std::uint16_t service, std::uint16_t instance,
                              std::uint16_t event, ByteSpan payload);
  // Fields: stores the value and notifies it.
  Status<RuntimeError> set_field(std::uint16_t service, std::uint16_t instance,
                                 std::uint16_t event, ByteSpan value);
  // Subscribers currently known for an eventgroup.
  [[nodiscard]] std::size_t subscriber_count(std::uint16_t service, std::uint16_t instance,
                                             std::uint16_t eventgroup) const;

  // --- client side ---
  void on_availability(AvailabilityHandler handler);
  // Handler for one event of a service; event kAnyEvent (0xFFFF, never a
  // valid event id) receives every event of the service that has no handler
  // of its own.
  static constexpr std::uint16_t kAnyEvent = 0xFFFF;
  void on_event(std::uint16_t service, std::uint16_t event, EventHandler handler);
  [[nodiscard]] bool available(std::uint16_t service, std::uint16_t instance = 0xFFFF) const;
  // Request/response; the handler runs once with the response, an error, or
  // kTimeout. Returns the session id used.
  Result<std::uint16_t, RuntimeError> request(std::uint16_t service, std::uint16_t instance,
                                              std::uint16_t method, ByteSpan payload,
                                              ResponseHandler handler,
                                              std::optional<Duration> timeout = std::nullopt);
  Status<RuntimeError> fire_and_forget(std::uint16_t service, std::uint16_t instance,
                                       std::uint16_t method, ByteSpan payload);

  // --- security and diagnostics ---
  void on_rejection(RejectionHandler handler);
  [[nodiscard]] const RuntimeCounters& counters() const;
  // Bytes held by SOME/IP-TP reassembly right now (bounded by 8 messages of
  // max_message_size plus the SecOC overhead; freed on timeout).
  [[nodiscard]] std::size_t tp_buffered_bytes() const;
  // Requests waiting for an answer.
  [[nodiscard]] std::size_t pending_requests() const;
  [[nodiscard]] const RuntimeConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace layersec::someip
