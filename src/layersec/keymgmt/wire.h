// The key-management SOME/IP service: ids, the payloads that are not Mode B
// messages, typed errors and their SOME/IP return codes. Layouts and the
// state machines: docs/kex.md "Key management over SOME/IP".
//
//   service 0x4B45 ("KE", configurable), instance 1, UDP
//   method 0x0001 Hello       req  version(1) || n(1) || n x KEM wire id (preference order, 1..16)
//                             resp version(1) || KEM id(1) || confirm MAC id(1) || u16 len || publisher cert DER
//   method 0x0002 KeyRequest  req  Mode B KeyRequest (docs/pki.md §3.2)
//                             resp Mode B KeyDelivery (§3.3), the group key of (service, eventgroup)
//   method 0x0003 KeyConfirm  req  Mode B KeyConfirm (§3.4)
//                             resp ConfirmAck: version(1) || u16 service || u16 eventgroup || u32 key id
//   method 0x0010 NegotiateHello     req  negotiation Hello frame (kex/negotiation.h)
//                             resp u32 session || PublicKey frame
//   method 0x0011 NegotiateExchange  req  u32 session || KeyExchange frame
//                             resp Finished frame
//   event  0x8001 RekeyNotice (eventgroup 0x0001)
//        version(1) || u16 service || u16 eventgroup || u32 new key id || flags(1)
//        || u64 timestamp (ns) || u16 len || signature
//        flags bit 0: the previous key is revoked (a member left); other bits 0.
//        signature = Sign(publisher certificate key, "layersec keymgmt v1 rekey" || notice[0 .. 18))
//
// Refusals are SOME/IP ERROR messages with a service-specific return code
// (0x20..0x2D, KeyReturnCode below). All integers big-endian; every parser
// rejects trailing bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "layersec/base/bytes.h"
#include "layersec/base/result.h"
#include "layersec/kex/kem.h"
#include "layersec/kex/mode_b.h"
#include "layersec/someip/message.h"
#include "layersec/someip/runtime.h"

namespace layersec::keymgmt {

inline constexpr std::uint16_t kDefaultServiceId = 0x4B45;  // "KE"
inline constexpr std::uint8_t kWireVersion = 1;
inline constexpr std::size_t kMaxHelloKems = 16;

struct ServiceIds {
  std::uint16_t service_id = kDefaultServiceId;
  std::uint16_t instance_id = 0x0001;
  std::uint16_t hello_method = 0x0001;
  std::uint16_t key_request_method = 0x0002;
  std::uint16_t key_confirm_method = 0x0003;
  std::uint16_t negotiate_hello_method = 0x0010;     // 4-step negotiation, steps 1-2
  std::uint16_t negotiate_exchange_method = 0x0011;  // steps 3-4
  std::uint16_t rekey_event = 0x8001;
  std::uint16_t rekey_eventgroup = 0x0001;
  std::uint16_t udp_port = 30600;  // the server's port for the key service
  // RekeyNotices go to this group (one datagram per rekey) instead of one
  // unicast copy per subscriber, when set.
  std::optional<someip::Endpoint> rekey_multicast;
};

// The offered service for the key server's RuntimeConfig::services, and the
// required one for a client's RuntimeConfig::clients.
[[nodiscard]] someip::ServiceConfig service_config(const ServiceIds& ids);
[[nodiscard]] someip::ClientConfig client_config(const ServiceIds& ids);

enum class KeyMgmtError : std::uint8_t {
  kMalformed,          // a payload does not parse
  kUnsupportedVersion,
  kUnsupportedKem,     // no common KEM / KEM or MAC not allowed
  kUnauthorised,       // certificate not authorised for the protected service
  kCertificate,        // other certificate failures (CA, validity, purpose)
  kReplay,             // nonce or key id already used
  kStale,              // timestamp outside the window / handshake timed out
  kBadSignature,       // request, delivery or rekey-notice signature wrong
  kBadConfirmation,    // KeyConfirm MAC wrong
  kUnknownSession,     // confirmation for no pending handshake
  kUnknownGroup,       // (service, eventgroup) not served here
  kRevoked,            // the member was evicted from the group
  kBusy,               // pending / replay tables full
  kKemFailure,         // KEM or key unwrap failed
  kWrongTranscript,    // fields do not match the handshake
  kProtocol,           // unexpected message or state
  kSecoc,              // the key could not be installed in the SecOC engine
  kRuntime,            // the SOME/IP runtime refused a call
  kTimeout,            // no answer from the key server
  kInternal,           // crypto backend or other local failure
};
inline constexpr std::size_t kKeyMgmtErrorCount = 20;
[[nodiscard]] std::string_view to_string(KeyMgmtError e);

// The return codes the server sends (service-specific range 0x20..0x3F).
enum class KeyReturnCode : std::uint8_t {
  kMalformed = 0x20,
  kUnsupportedVersion = 0x21,
  kUnsupportedKem = 0x22,
  kUnauthorised = 0x23,
  kCertificate = 0x24,
  kReplay = 0x25,
  kStale = 0x26,
  kBadSignature = 0x27,
  kBadConfirmation = 0x28,
  kUnknownSession = 0x29,
  kUnknownGroup = 0x2A,
  kRevoked = 0x2B,
  kBusy = 0x2C,
  kInternal = 0x2D,
};
[[nodiscard]] someip::ReturnCode to_return_code(KeyMgmtError e);
// What a client makes of an ERROR's return code (kTimeout for the runtime's
// local timeout, kProtocol for codes outside the table).
[[nodiscard]] KeyMgmtError from_return_code(someip::ReturnCode rc);
[[nodiscard]] KeyMgmtError from_mode_b(kex::ModeBError e);

struct HelloRequest {
  std::vector<kex::KemScheme> kems;  // preference order
};
struct HelloResponse {
  kex::KemScheme kem{};
  std::uint8_t mac_id = 0;
  ByteSpan certificate;  // view into the parsed payload
};
struct ConfirmAck {
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::uint32_t key_id = 0;
};
struct RekeyNotice {
  std::uint16_t service_id = 0;
  std::uint16_t eventgroup_id = 0;
  std::uint32_t key_id = 0;
  bool revoke_previous = false;
  std::uint64_t timestamp_ns = 0;
  ByteSpan signature;          // view (parse only)
  std::size_t signed_length = 0;  // bytes of the notice covered by the signature
};
inline constexpr std::string_view kRekeyLabel = "layersec keymgmt v1 rekey";
inline constexpr std::size_t kRekeySignedLength = 18;

[[nodiscard]] std::vector<std::uint8_t> encode_hello(const HelloRequest& h);
[[nodiscard]] Result<HelloRequest, KeyMgmtError> parse_hello(ByteSpan payload);
[[nodiscard]] std::vector<std::uint8_t> encode_hello_response(kex::KemScheme kem, std::uint8_t mac_id,
                                                              ByteSpan certificate);
[[nodiscard]] Result<HelloResponse, KeyMgmtError> parse_hello_response(ByteSpan payload);
[[nodiscard]] std::vector<std::uint8_t> encode_confirm_ack(const ConfirmAck& a);
[[nodiscard]] Result<ConfirmAck, KeyMgmtError> parse_confirm_ack(ByteSpan payload);
// The notice without its signature field (the signed part).
[[nodiscard]] std::vector<std::uint8_t> encode_rekey_notice_body(const RekeyNotice& n);
// Appends u16 length || signature to a body from encode_rekey_notice_body.
void append_signature(std::vector<std::uint8_t>& body, ByteSpan signature);
[[nodiscard]] Result<RekeyNotice, KeyMgmtError> parse_rekey_notice(ByteSpan payload);

}  // namespace layersec::keymgmt
