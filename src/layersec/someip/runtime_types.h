// The application-facing types of a SOME/IP runtime (runtime.h): typed
// errors, what handlers receive and fill, security rejections and counters.
// Plain data; shared by the runtime's parts.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/secoc/engine.h"
#include "layersec/someip/address.h"
#include "layersec/someip/error.h"
#include "layersec/someip/message.h"
#include "layersec/someip/sd_types.h"
#include "layersec/someip/service_discovery.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {

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
  std::uint64_t tp_rejected = 0;  // sum(tp_rejected_by) + tp_reassembled_malformed
  // SOME/IP-TP segments refused, by TpError (tp.h: the TP header parse and
  // the reassembler), and completed messages whose header does not parse.
  std::array<std::uint64_t, kTpErrorCount> tp_rejected_by{};
  std::uint64_t tp_reassembled_malformed = 0;
  std::uint64_t transport_errors = 0;
  std::uint64_t secoc_protect_failed = 0;  // protect() refused (message not sent)
  std::uint64_t secoc_syncs_sent = 0;      // sync notifications (datagrams)
  std::uint64_t secoc_syncs_accepted = 0;  // sync messages the engine accepted
  std::uint64_t secoc_syncs_duplicate = 0;  // resends of the accepted cycle (no state change)
  std::uint64_t secoc_unbound_rejected = 0;  // received on a SecOC service without a binding
  std::uint64_t secoc_unbound_refused = 0;   // not sent: SecOC service, id without a binding
  std::uint64_t sd_datagrams_sent = 0;
  // With RuntimeConfig::cost_clock: that clock's time inside the engine's
  // protect (sending) and verify (receiving) calls of messages (not SD), ns.
  std::uint64_t secoc_protect_ns = 0;
  std::uint64_t secoc_verify_ns = 0;
  RxCounters rx;  // error policy (drops by reason, errors sent)
  // SD entries the state machines refused (sender binding, allowlists,
  // Nacks), by reason; current as of the counters() call.
  SdDropCounters sd_dropped;
  // The SD endpoint's counters (datagrams received, own, rejected by reason,
  // reboots, ignored entries; sd.dropped == sd_dropped) and the TP
  // reassembler's (aborted, superseded, timed out, duplicates); current as of
  // the counters() call, zero without SD.
  SdCounters sd;
  TpCounters tp;
};

}  // namespace layersec::someip
