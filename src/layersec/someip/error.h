// The SOME/IP error policy for received messages (Open SOME/IP Specification
// feat_req_someip_371 ff., feat_req_someip_798; AUTOSAR PRS_SOMEIP_00195 check
// order): a REQUEST that cannot be served is answered with an ERROR message
// carrying the prescribed return code; everything else that cannot be used is
// dropped and counted. Errors are never answered with errors, and
// fire-and-forget messages never get a reply.
//
// Checks, in order, for a REQUEST (message type 0x00):
//   1. framing broken but the 16-byte header readable and Length >= 8
//                                               -> E_MALFORMED_MESSAGE
//   2. protocol version != 0x01                  -> E_WRONG_PROTOCOL_VERSION
//   3. service not offered here                  -> E_UNKNOWN_SERVICE
//   4. method unknown in that service            -> E_UNKNOWN_METHOD
//   5. interface version != the service's major  -> E_WRONG_INTERFACE_VERSION
//   6. method is fire-and-forget                 -> E_WRONG_MESSAGE_TYPE
//   7. return code != E_OK                       -> E_MALFORMED_MESSAGE
// The same failures on REQUEST_NO_RETURN, and any other message type arriving
// at a server, are dropped with a reason.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/someip/message.h"

namespace layersec::someip {

enum class MethodKind : std::uint8_t { kNone, kRequestResponse, kFireAndForget };

// What a server offers, as the error policy needs to see it.
class ServiceTable {
 public:
  virtual ~ServiceTable() = default;
  [[nodiscard]] virtual bool has_service(std::uint16_t service) const = 0;
  // The major version (interface version) of an offered service.
  [[nodiscard]] virtual std::uint8_t interface_version(std::uint16_t service) const = 0;
  [[nodiscard]] virtual MethodKind method(std::uint16_t service, std::uint16_t method) const = 0;
};

enum class RxAction : std::uint8_t { kDeliver, kReplyError, kDrop };

enum class DropReason : std::uint8_t {
  kNone,
  kTruncatedHeader,
  kLengthTooSmall,
  kMalformed,               // framing broken on a non-request
  kUnknownMessageType,
  kWrongProtocolVersion,
  kUnknownService,
  kUnknownMethod,
  kWrongInterfaceVersion,
  kWrongMessageType,        // e.g. REQUEST_NO_RETURN to a request/response method
  kNotARequest,             // responses, errors, notifications, ACKs at a server
  kBadReturnCode,
  kCount,
};
[[nodiscard]] std::string_view to_string(DropReason r);

struct RxVerdict {
  RxAction action = RxAction::kDeliver;
  ReturnCode code = ReturnCode::kOk;     // for kReplyError
  DropReason reason = DropReason::kNone; // why not delivered
};

// Verdict for a message that framed correctly, received by a server.
[[nodiscard]] RxVerdict check_server_message(const Header& h, const ServiceTable& services);
// Verdict for a datagram whose framing failed at `rest` (the bytes from the
// failing message on) with parse error `e`.
[[nodiscard]] RxVerdict check_malformed(ByteSpan rest, ParseError e);

// Writes the ERROR message answering `request` (feat_req_someip_371): same
// Message ID and Request ID, protocol version 0x01, the request's interface
// version, message type ERROR (0x81), the given return code, empty payload.
[[nodiscard]] bool write_error_response(ByteWriter& w, const Header& request, ReturnCode code);

// Drop/error counters, by reason and by return code sent.
struct RxCounters {
  std::array<std::uint64_t, static_cast<std::size_t>(DropReason::kCount)> dropped{};
  std::array<std::uint64_t, 16> errors_sent{};
  std::uint64_t delivered = 0;
  void count(const RxVerdict& v);
  [[nodiscard]] std::uint64_t dropped_for(DropReason r) const {
    return dropped[static_cast<std::size_t>(r)];
  }
  [[nodiscard]] std::uint64_t sent(ReturnCode c) const {
    return errors_sent[static_cast<std::size_t>(c) & 0x0F];
  }
};

}  // namespace layersec::someip
