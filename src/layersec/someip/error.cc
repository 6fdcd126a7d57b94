#include "layersec/someip/error.h"

namespace layersec::someip {

std::string_view to_string(DropReason r) {
  switch (r) {
    case DropReason::kNone: return "none";
    case DropReason::kTruncatedHeader: return "truncated-header";
    case DropReason::kLengthTooSmall: return "length-too-small";
    case DropReason::kMalformed: return "malformed";
    case DropReason::kUnknownMessageType: return "unknown-message-type";
    case DropReason::kWrongProtocolVersion: return "wrong-protocol-version";
    case DropReason::kUnknownService: return "unknown-service";
    case DropReason::kUnknownMethod: return "unknown-method";
    case DropReason::kWrongInterfaceVersion: return "wrong-interface-version";
    case DropReason::kWrongMessageType: return "wrong-message-type";
    case DropReason::kNotARequest: return "not-a-request";
    case DropReason::kBadReturnCode: return "bad-return-code";
    case DropReason::kCount: break;
  }
  return "unknown";
}

namespace {
RxVerdict drop(DropReason r) { return RxVerdict{RxAction::kDrop, ReturnCode::kOk, r}; }

// A REQUEST is answered; REQUEST_NO_RETURN (fire-and-forget) never is.
RxVerdict refuse(const Header& h, ReturnCode code, DropReason r) {
  if (h.message_type == MessageType::kRequest) return RxVerdict{RxAction::kReplyError, code, r};
  return drop(r);
}
}  // namespace

RxVerdict check_server_message(const Header& h, const ServiceTable& services) {
  const auto type = static_cast<std::uint8_t>(h.message_type);
  if (!is_known_message_type(type)) return drop(DropReason::kUnknownMessageType);
  // Only requests are served; TP segments are checked after reassembly.
  if (h.message_type != MessageType::kRequest && h.message_type != MessageType::kRequestNoReturn)
    return drop(DropReason::kNotARequest);
  if (h.protocol_version != kProtocolVersion)
    return refuse(h, ReturnCode::kWrongProtocolVersion, DropReason::kWrongProtocolVersion);
  if (!services.has_service(h.service_id))
    return refuse(h, ReturnCode::kUnknownService, DropReason::kUnknownService);
  const MethodKind kind = services.method(h.service_id, h.method_id);
  if (kind == MethodKind::kNone)
    return refuse(h, ReturnCode::kUnknownMethod, DropReason::kUnknownMethod);
  if (h.interface_version != services.interface_version(h.service_id))
    return refuse(h, ReturnCode::kWrongInterfaceVersion, DropReason::kWrongInterfaceVersion);
  if (h.message_type == MessageType::kRequest && kind == MethodKind::kFireAndForget)
    return refuse(h, ReturnCode::kWrongMessageType, DropReason::kWrongMessageType);
  if (h.message_type == MessageType::kRequestNoReturn && kind == MethodKind::kRequestResponse)
    return drop(DropReason::kWrongMessageType);
  if (h.return_code != 0) return refuse(h, ReturnCode::kMalformedMessage, DropReason::kBadReturnCode);
  return RxVerdict{};
}

RxVerdict check_malformed(ByteSpan rest, ParseError e) {
  auto h = read_raw_header(rest);
  if (!h) return drop(DropReason::kTruncatedHeader);
  // feat_req_someip_798: Length < 8 is ignored, never answered.
  if (e == ParseError::kLengthTooSmall || h->length < kLengthHeaderPart)
    return drop(DropReason::kLengthTooSmall);
  if (e == ParseError::kUnknownMessageType) return drop(DropReason::kUnknownMessageType);
  if (h->message_type == MessageType::kRequest && h->protocol_version == kProtocolVersion)
    return RxVerdict{RxAction::kReplyError, ReturnCode::kMalformedMessage, DropReason::kMalformed};
  return drop(DropReason::kMalformed);
}

bool write_error_response(ByteWriter& w, const Header& request, ReturnCode code) {
  Header h = request;
  h.protocol_version = kProtocolVersion;
  h.message_type = MessageType::kError;
  h.return_code = static_cast<std::uint8_t>(code);
  return write_header(w, h, 0);
}

void RxCounters::count(const RxVerdict& v) {
  switch (v.action) {
    case RxAction::kDeliver: ++delivered; break;
    case RxAction::kReplyError:
      ++errors_sent[static_cast<std::size_t>(v.code) & 0x0F];
      ++dropped[static_cast<std::size_t>(v.reason)];
      break;
    case RxAction::kDrop: ++dropped[static_cast<std::size_t>(v.reason)]; break;
  }
}

}  // namespace layersec::someip
