// SOME/IP message header codec (Open SOME/IP Specification, feat_req_someip_42..
// 90, 684, 371; AUTOSAR PRS_SOMEIPProtocol §4.1.2).
//
// A SOME/IP message is a 16-byte big-endian header followed by the payload:
//
//   | Message ID (Service ID | Method ID) | Length | Request ID (Client | Session) |
//   | Protocol Version | Interface Version | Message Type | Return Code | payload |
//
// Length counts every byte after the Length field (8 header bytes + payload,
// feat_req_someip_77). Several messages may follow each other in one UDP
// datagram; DatagramIterator walks them. Parsing yields views into the caller's
// buffer; nothing is copied or allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"

namespace layersec::someip {

inline constexpr std::size_t kHeaderSize = 16;
// Length counts these header bytes after the Length field (feat_req_someip_77).
inline constexpr std::uint32_t kLengthHeaderPart = 8;
inline constexpr std::uint8_t kProtocolVersion = 0x01;  // feat_req_someip_90
inline constexpr std::uint16_t kSdServiceId = 0xFFFF;
inline constexpr std::uint16_t kSdMethodId = 0x8100;
inline constexpr std::uint16_t kSdPort = 30490;  // feat_req_someip_658
// Largest payload of an unsegmented SOME/IP message over UDP (feat_req_someiptp_760).
inline constexpr std::size_t kMaxUdpPayload = 1400;

// Message Type (feat_req_someip_684). Bit 0x20 marks a SOME/IP-TP segment
// (feat_req_someip_761), bit 0x40 the (reserved, unused) ACK variants.
enum class MessageType : std::uint8_t {
  kRequest = 0x00,
  kRequestNoReturn = 0x01,
  kNotification = 0x02,
  kRequestAck = 0x40,
  kRequestNoReturnAck = 0x41,
  kNotificationAck = 0x42,
  kResponse = 0x80,
  kError = 0x81,
  kResponseAck = 0xC0,
  kErrorAck = 0xC1,
  kTpRequest = 0x20,
  kTpRequestNoReturn = 0x21,
  kTpNotification = 0x22,
  kTpResponse = 0xA0,
  kTpError = 0xA1,
};
inline constexpr std::uint8_t kTpFlag = 0x20;
inline constexpr std::uint8_t kAckFlag = 0x40;

// True for the 15 values above; anything else is rejected by the parser.
[[nodiscard]] bool is_known_message_type(std::uint8_t v);
[[nodiscard]] constexpr bool is_tp(MessageType t) {
  return (static_cast<std::uint8_t>(t) & kTpFlag) != 0;
}
// The type with the TP flag cleared (0xA0 -> 0x80).
[[nodiscard]] constexpr MessageType without_tp(MessageType t) {
  return static_cast<MessageType>(static_cast<std::uint8_t>(t) & ~kTpFlag);
}
[[nodiscard]] constexpr MessageType with_tp(MessageType t) {
  return static_cast<MessageType>(static_cast<std::uint8_t>(t) | kTpFlag);
}
[[nodiscard]] std::string_view to_string(MessageType t);

// Return Code (feat_req_someip_371; 0x0B..0x0F as AUTOSAR defines them).
enum class ReturnCode : std::uint8_t {
  kOk = 0x00,
  kNotOk = 0x01,
  kUnknownService = 0x02,
  kUnknownMethod = 0x03,
  kNotReady = 0x04,
  kNotReachable = 0x05,
  kTimeout = 0x06,
  kWrongProtocolVersion = 0x07,
  kWrongInterfaceVersion = 0x08,
  kMalformedMessage = 0x09,
  kWrongMessageType = 0x0A,
  kE2eRepeated = 0x0B,
  kE2eWrongSequence = 0x0C,
  kE2e = 0x0D,
  kE2eNotAvailable = 0x0E,
  kE2eNoNewData = 0x0F,
};
// Name of a return code; 0x10..0x1F "reserved-generic", 0x20..0x3F
// "service-specific", above "invalid".
[[nodiscard]] std::string_view return_code_name(std::uint8_t rc);

// The decoded header. `length` is the wire value (bytes after the Length field).
struct Header {
  std::uint16_t service_id = 0;
  std::uint16_t method_id = 0;
  std::uint32_t length = kLengthHeaderPart;
  std::uint16_t client_id = 0;
  std::uint16_t session_id = 0;
  std::uint8_t protocol_version = kProtocolVersion;
  std::uint8_t interface_version = 0;
  MessageType message_type = MessageType::kRequest;
  std::uint8_t return_code = 0;

  [[nodiscard]] std::uint32_t message_id() const {
    return (std::uint32_t{service_id} << 16) | method_id;
  }
  [[nodiscard]] std::uint32_t request_id() const {
    return (std::uint32_t{client_id} << 16) | session_id;
  }
  [[nodiscard]] bool is_sd() const {
    return service_id == kSdServiceId && method_id == kSdMethodId;
  }
  bool operator==(const Header&) const = default;
};

// Why a message or datagram was rejected. Each maps to a drop counter; the
// request-error policy (error.h) maps some of them to SOME/IP return codes.
enum class ParseError : std::uint8_t {
  kTruncatedHeader,       // fewer than 16 bytes
  kLengthTooSmall,        // Length < 8 (feat_req_someip_798: ignore)
  kLengthBeyondDatagram,  // Length points past the end of the datagram
  kUnknownMessageType,    // not one of the 15 defined values
  kTrailingBytes,         // bytes after the last complete message
  kTruncatedTpHeader,     // TP flag set but no room for the 4-byte TP header
};
[[nodiscard]] std::string_view to_string(ParseError e);

// Reads the 16 header bytes without judging Length against the buffer and
// without checking the message type or protocol version (the error policy
// needs the raw fields of a broken request to answer it).
[[nodiscard]] Result<Header, ParseError> read_raw_header(ByteSpan bytes);

// One SOME/IP message inside a datagram: the header and a view of the payload
// (for TP segments the payload starts with the 4-byte TP header).
struct MessageView {
  Header header;
  ByteSpan payload;  // Length - 8 bytes
  ByteSpan bytes;    // the whole message, header included
};

// Parses exactly one message that fills `bytes` (no trailing bytes).
[[nodiscard]] Result<MessageView, ParseError> parse_message(ByteSpan bytes);

// Walks the messages of one UDP datagram (several SOME/IP messages may share
// a datagram). next() yields each message in order; on the first malformed
// message it yields the error and stops (the rest of the datagram cannot be
// framed any more).
class DatagramIterator {
 public:
  explicit DatagramIterator(ByteSpan datagram) : rest_(datagram) {}
  [[nodiscard]] bool done() const { return rest_.empty() || failed_; }
  // Precondition: !done().
  [[nodiscard]] Result<MessageView, ParseError> next();

 private:
  ByteSpan rest_;
  bool failed_ = false;
};

// Writes a header. `h.length` is ignored and computed from payload_size.
// Returns false when the writer is out of room or payload_size + 8 overflows.
[[nodiscard]] bool write_header(ByteWriter& w, const Header& h, std::size_t payload_size);
// Writes header and payload. The header's length field is computed.
[[nodiscard]] bool write_message(ByteWriter& w, const Header& h, ByteSpan payload);

}  // namespace layersec::someip
