#include "layersec/someip/message.h"

#include <limits>

namespace layersec::someip {

bool is_known_message_type(std::uint8_t v) {
  switch (v) {
    case 0x00: case 0x01: case 0x02:
    case 0x40: case 0x41: case 0x42:
    case 0x80: case 0x81: case 0xC0: case 0xC1:
    case 0x20: case 0x21: case 0x22: case 0xA0: case 0xA1:
      return true;
    default:
      return false;
  }
}

std::string_view to_string(MessageType t) {
  switch (t) {
    case MessageType::kRequest: return "REQUEST";
    case MessageType::kRequestNoReturn: return "REQUEST_NO_RETURN";
    case MessageType::kNotification: return "NOTIFICATION";
    case MessageType::kRequestAck: return "REQUEST_ACK";
    case MessageType::kRequestNoReturnAck: return "REQUEST_NO_RETURN_ACK";
    case MessageType::kNotificationAck: return "NOTIFICATION_ACK";
    case MessageType::kResponse: return "RESPONSE";
    case MessageType::kError: return "ERROR";
    case MessageType::kResponseAck: return "RESPONSE_ACK";
    case MessageType::kErrorAck: return "ERROR_ACK";
    case MessageType::kTpRequest: return "TP_REQUEST";
    case MessageType::kTpRequestNoReturn: return "TP_REQUEST_NO_RETURN";
    case MessageType::kTpNotification: return "TP_NOTIFICATION";
    case MessageType::kTpResponse: return "TP_RESPONSE";
    case MessageType::kTpError: return "TP_ERROR";
  }
  return "UNKNOWN";
}

std::string_view return_code_name(std::uint8_t rc) {
  static constexpr std::string_view kNames[] = {
      "E_OK", "E_NOT_OK", "E_UNKNOWN_SERVICE", "E_UNKNOWN_METHOD", "E_NOT_READY",
      "E_NOT_REACHABLE", "E_TIMEOUT", "E_WRONG_PROTOCOL_VERSION", "E_WRONG_INTERFACE_VERSION",
      "E_MALFORMED_MESSAGE", "E_WRONG_MESSAGE_TYPE", "E_E2E_REPEATED", "E_E2E_WRONG_SEQUENCE",
      "E_E2E", "E_E2E_NOT_AVAILABLE", "E_E2E_NO_NEW_DATA"};
  if (rc < std::size(kNames)) return kNames[rc];
  if (rc <= 0x1F) return "RESERVED_GENERIC";
  if (rc <= 0x3F) return "SERVICE_SPECIFIC";
  return "INVALID";
}

std::string_view to_string(ParseError e) {
  switch (e) {
    case ParseError::kTruncatedHeader: return "truncated-header";
    case ParseError::kLengthTooSmall: return "length-too-small";
    case ParseError::kLengthBeyondDatagram: return "length-beyond-datagram";
    case ParseError::kUnknownMessageType: return "unknown-message-type";
    case ParseError::kTrailingBytes: return "trailing-bytes";
    case ParseError::kTruncatedTpHeader: return "truncated-tp-header";
  }
  return "unknown";
}

Result<Header, ParseError> read_raw_header(ByteSpan bytes) {
  ByteReader r(bytes);
  Header h;
  h.service_id = r.u16();
  h.method_id = r.u16();
  h.length = r.u32();
  h.client_id = r.u16();
  h.session_id = r.u16();
  h.protocol_version = r.u8();
  h.interface_version = r.u8();
  h.message_type = static_cast<MessageType>(r.u8());
  h.return_code = r.u8();
  if (!r.ok()) return Err(ParseError::kTruncatedHeader);
  return h;
}

namespace {
// Frames one message at the start of `bytes`; `consumed` gets its size.
Result<MessageView, ParseError> frame_message(ByteSpan bytes, std::size_t& consumed) {
  auto hr = read_raw_header(bytes);
  if (!hr) return Err(hr.error());
  const Header& h = *hr;
  if (h.length < kLengthHeaderPart) return Err(ParseError::kLengthTooSmall);
  const std::size_t avail = bytes.size() - 8;  // bytes after the Length field
  if (h.length > avail) return Err(ParseError::kLengthBeyondDatagram);
  if (!is_known_message_type(static_cast<std::uint8_t>(h.message_type)))
    return Err(ParseError::kUnknownMessageType);
  const std::size_t total = std::size_t{h.length} + 8;
  if (is_tp(h.message_type) && total < kHeaderSize + 4) return Err(ParseError::kTruncatedTpHeader);
  consumed = total;
  MessageView v;
  v.header = h;
  v.bytes = bytes.subspan(0, total);
  v.payload = bytes.subspan(kHeaderSize, total - kHeaderSize);
  return v;
}
}  // namespace

Result<MessageView, ParseError> parse_message(ByteSpan bytes) {
  std::size_t consumed = 0;
  auto r = frame_message(bytes, consumed);
  if (!r) return Err(r.error());
  if (consumed != bytes.size()) return Err(ParseError::kTrailingBytes);
  return r;
}

Result<MessageView, ParseError> DatagramIterator::next() {
  std::size_t consumed = 0;
  auto r = frame_message(rest_, consumed);
  if (!r) {
    failed_ = true;
    return Err(r.error());
  }
  rest_ = rest_.subspan(consumed);
  return r;
}

bool write_header(ByteWriter& w, const Header& h, std::size_t payload_size) {
  if (payload_size > std::numeric_limits<std::uint32_t>::max() - kLengthHeaderPart) return false;
  bool ok = w.u16(h.service_id);
  ok = ok && w.u16(h.method_id);
  ok = ok && w.u32(static_cast<std::uint32_t>(payload_size + kLengthHeaderPart));
  ok = ok && w.u16(h.client_id);
  ok = ok && w.u16(h.session_id);
  ok = ok && w.u8(h.protocol_version);
  ok = ok && w.u8(h.interface_version);
  ok = ok && w.u8(static_cast<std::uint8_t>(h.message_type));
  ok = ok && w.u8(h.return_code);
  return ok;
}

bool write_message(ByteWriter& w, const Header& h, ByteSpan payload) {
  return write_header(w, h, payload.size()) && w.bytes(payload);
}

}  // namespace layersec::someip
