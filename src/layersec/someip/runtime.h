// Runtime: one SOME/IP node (an ECU's SOME/IP stack). It ties the codecs,
// the SD state machines (service_discovery.h), SOME/IP-TP and the error
// policy (error.h) to a clock, an alarm and a packet writer (transport.h),
// and offers the application API:
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
// the freshness clock passed to attach_secoc (default: the runtime's clock),
// which must be synchronised between the nodes (docs/secoc.md). The runtime
// reads no clock of its own: its time is RuntimeIo::clock, and SecOC call
// costs are timed only on RuntimeConfig::cost_clock.
//
// Parts (each with its own header and test): SdDriver (SD glue, availability,
// multicast membership), RequestTable (pending calls, timeouts, session ids),
// EventPublisher (event state, notification destinations), SecocFilter and
// SyncScheduler (the SecOC binding and its sync messages), MessageSender
// (serialise, protect, TP-segment, send). runtime.cc holds the lifecycle, the
// timer, the receive dispatch and the application API over them.
//
// Threading: single-threaded. Every call, every I/O callback and every
// timer runs on the I/O's thread (the simulator, or the EventLoop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/base/time.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/address.h"
#include "layersec/someip/runtime_config.h"
#include "layersec/someip/runtime_types.h"
#include "layersec/someip/sd_types.h"
#include "layersec/someip/transport.h"

namespace layersec::someip {

// --- the runtime ------------------------------------------------------------

class Runtime {
 public:
  // The parts of `io` and `random` must outlive the runtime. Throws
  // std::invalid_argument for an inconsistent configuration (duplicate ids,
  // an event in an unknown eventgroup, ...), naming the item.
  Runtime(RuntimeConfig config, const RuntimeIo& io, RandomSource& random);
  // On an adapter that is clock, alarm and packet writer at once.
  Runtime(RuntimeConfig config, Transport& transport, RandomSource& random);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // SecOC: `engine` (and `freshness_clock`, if given; default: the runtime's
  // clock) are not owned and must outlive the runtime. Call before start().
  // Throws std::invalid_argument for a binding to an unknown PDU, SD PDUs
  // without timestamp freshness, or message bindings without SD protection
  // and without sd_unprotected.
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
