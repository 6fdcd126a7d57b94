#include "layersec/keymgmt/wire.h"

#include "layersec/base/bytes.h"

namespace layersec::keymgmt {

someip::ServiceConfig service_config(const ServiceIds& ids) {
  someip::ServiceConfig s;
  s.service_id = ids.service_id;
  s.instance_id = ids.instance_id;
  s.major_version = 1;
  s.udp_port = ids.udp_port;
  s.methods = {someip::MethodConfig{ids.hello_method, false}, someip::MethodConfig{ids.key_request_method, false},
               someip::MethodConfig{ids.key_confirm_method, false},
               someip::MethodConfig{ids.negotiate_hello_method, false},
               someip::MethodConfig{ids.negotiate_exchange_method, false}};
  someip::EventConfig e;
  e.event_id = ids.rekey_event;
  e.eventgroups = {ids.rekey_eventgroup};
  s.events = {e};
  someip::EventgroupConfig g;
  g.eventgroup_id = ids.rekey_eventgroup;
  g.multicast = ids.rekey_multicast;
  s.eventgroups = {g};
  return s;
}

someip::ClientConfig client_config(const ServiceIds& ids) {
  someip::ClientConfig c;
  c.service_id = ids.service_id;
  c.instance_id = ids.instance_id;
  c.eventgroups = {ids.rekey_eventgroup};
  return c;
}

std::string_view to_string(KeyMgmtError e) {
  switch (e) {
    case KeyMgmtError::kMalformed: return "malformed";
    case KeyMgmtError::kUnsupportedVersion: return "unsupported version";
    case KeyMgmtError::kUnsupportedKem: return "unsupported KEM";
    case KeyMgmtError::kUnauthorised: return "not authorised for the service";
    case KeyMgmtError::kCertificate: return "certificate refused";
    case KeyMgmtError::kReplay: return "replay";
    case KeyMgmtError::kStale: return "stale";
    case KeyMgmtError::kBadSignature: return "bad signature";
    case KeyMgmtError::kBadConfirmation: return "bad confirmation";
    case KeyMgmtError::kUnknownSession: return "unknown session";
    case KeyMgmtError::kUnknownGroup: return "unknown group";
    case KeyMgmtError::kRevoked: return "member revoked";
    case KeyMgmtError::kBusy: return "busy";
    case KeyMgmtError::kKemFailure: return "KEM failure";
    case KeyMgmtError::kWrongTranscript: return "wrong transcript";
    case KeyMgmtError::kProtocol: return "protocol error";
    case KeyMgmtError::kSecoc: return "SecOC key installation failed";
    case KeyMgmtError::kRuntime: return "SOME/IP runtime refused";
    case KeyMgmtError::kTimeout: return "timeout";
    case KeyMgmtError::kInternal: return "internal error";
  }
  return "?";
}

someip::ReturnCode to_return_code(KeyMgmtError e) {
  auto rc = [](KeyReturnCode c) { return static_cast<someip::ReturnCode>(c); };
  switch (e) {
    case KeyMgmtError::kMalformed: return rc(KeyReturnCode::kMalformed);
    case KeyMgmtError::kUnsupportedVersion: return rc(KeyReturnCode::kUnsupportedVersion);
    case KeyMgmtError::kUnsupportedKem: return rc(KeyReturnCode::kUnsupportedKem);
    case KeyMgmtError::kUnauthorised: return rc(KeyReturnCode::kUnauthorised);
    case KeyMgmtError::kCertificate: return rc(KeyReturnCode::kCertificate);
    case KeyMgmtError::kReplay: return rc(KeyReturnCode::kReplay);
    case KeyMgmtError::kStale: return rc(KeyReturnCode::kStale);
    case KeyMgmtError::kBadSignature: return rc(KeyReturnCode::kBadSignature);
    case KeyMgmtError::kBadConfirmation: return rc(KeyReturnCode::kBadConfirmation);
    case KeyMgmtError::kUnknownSession: return rc(KeyReturnCode::kUnknownSession);
    case KeyMgmtError::kUnknownGroup: return rc(KeyReturnCode::kUnknownGroup);
    case KeyMgmtError::kRevoked: return rc(KeyReturnCode::kRevoked);
    case KeyMgmtError::kBusy: return rc(KeyReturnCode::kBusy);
    case KeyMgmtError::kKemFailure:
    case KeyMgmtError::kWrongTranscript:
    case KeyMgmtError::kProtocol: return rc(KeyReturnCode::kMalformed);
    default: return rc(KeyReturnCode::kInternal);
  }
}

KeyMgmtError from_return_code(someip::ReturnCode code) {
  if (code == someip::ReturnCode::kTimeout) return KeyMgmtError::kTimeout;
  switch (static_cast<std::uint8_t>(code)) {
    case 0x20: return KeyMgmtError::kMalformed;
    case 0x21: return KeyMgmtError::kUnsupportedVersion;
    case 0x22: return KeyMgmtError::kUnsupportedKem;
    case 0x23: return KeyMgmtError::kUnauthorised;
    case 0x24: return KeyMgmtError::kCertificate;
    case 0x25: return KeyMgmtError::kReplay;
    case 0x26: return KeyMgmtError::kStale;
    case 0x27: return KeyMgmtError::kBadSignature;
    case 0x28: return KeyMgmtError::kBadConfirmation;
    case 0x29: return KeyMgmtError::kUnknownSession;
    case 0x2A: return KeyMgmtError::kUnknownGroup;
    case 0x2B: return KeyMgmtError::kRevoked;
    case 0x2C: return KeyMgmtError::kBusy;
    case 0x2D: return KeyMgmtError::kInternal;
    default: return KeyMgmtError::kProtocol;
  }
}

KeyMgmtError from_mode_b(kex::ModeBError e) {
  using E = kex::ModeBError;
  switch (e) {
    case E::kMalformed: return KeyMgmtError::kMalformed;
    case E::kUnsupportedVersion: return KeyMgmtError::kUnsupportedVersion;
    case E::kUnexpectedMessage: return KeyMgmtError::kProtocol;
    case E::kWrongTranscript: return KeyMgmtError::kWrongTranscript;
    case E::kReplay: return KeyMgmtError::kReplay;
    case E::kStale: return KeyMgmtError::kStale;
    case E::kUnsupportedKem:
    case E::kKemKeyMismatch: return KeyMgmtError::kUnsupportedKem;
    case E::kCertMalformed:
    case E::kCertExpired:
    case E::kCertNotYetValid:
    case E::kCertWrongCa:
    case E::kCertInvalid: return KeyMgmtError::kCertificate;
    case E::kUnauthorisedService: return KeyMgmtError::kUnauthorised;
    case E::kBadSignature: return KeyMgmtError::kBadSignature;
    case E::kKemFailure:
    case E::kKeyUnwrapFailed: return KeyMgmtError::kKemFailure;
    case E::kBadConfirmation: return KeyMgmtError::kBadConfirmation;
    case E::kUnknownSession: return KeyMgmtError::kUnknownSession;
    case E::kTooManyPending: return KeyMgmtError::kBusy;
    case E::kBadArgument:
    case E::kBackend: return KeyMgmtError::kInternal;
  }
  return KeyMgmtError::kInternal;
}

namespace {
std::vector<std::uint8_t> buffer(std::size_t n) { return std::vector<std::uint8_t>(n); }
}  // namespace

std::vector<std::uint8_t> encode_hello(const HelloRequest& h) {
  auto out = buffer(2 + h.kems.size());
  ByteWriter w(out);
  w.u8(kWireVersion);
  w.u8(static_cast<std::uint8_t>(h.kems.size()));
  for (auto k : h.kems) w.u8(kex::kem_wire_id(k));
  out.resize(w.size());
  return out;
}

Result<HelloRequest, KeyMgmtError> parse_hello(ByteSpan payload) {
  ByteReader r(payload);
  const std::uint8_t version = r.u8();
  ByteReader list = r.sub_u8_prefixed();
  if (!r.finish() || !list.ok()) return Err(KeyMgmtError::kMalformed);
  if (version != kWireVersion) return Err(KeyMgmtError::kUnsupportedVersion);
  const std::size_t n = list.remaining();
  if (n == 0 || n > kMaxHelloKems) return Err(KeyMgmtError::kMalformed);
  HelloRequest h;
  for (std::size_t i = 0; i < n; ++i) {
    // Unknown ids are skipped: a newer client may offer KEMs we lack.
    if (auto k = kex::kem_from_wire_id(list.u8())) h.kems.push_back(*k);
  }
  return h;
}

std::vector<std::uint8_t> encode_hello_response(kex::KemScheme kem, std::uint8_t mac_id, ByteSpan certificate) {
  auto out = buffer(5 + certificate.size());
  ByteWriter w(out);
  w.u8(kWireVersion);
  w.u8(kex::kem_wire_id(kem));
  w.u8(mac_id);
  w.u16(static_cast<std::uint16_t>(certificate.size()));
  w.bytes(certificate);
  out.resize(w.size());
  return out;
}

Result<HelloResponse, KeyMgmtError> parse_hello_response(ByteSpan payload) {
  ByteReader r(payload);
  const std::uint8_t version = r.u8();
  const std::uint8_t kem_id = r.u8();
  const std::uint8_t mac_id = r.u8();
  ByteReader cert = r.sub_u16_prefixed();
  if (!r.finish() || !cert.ok() || cert.remaining() == 0) return Err(KeyMgmtError::kMalformed);
  if (version != kWireVersion) return Err(KeyMgmtError::kUnsupportedVersion);
  auto kem = kex::kem_from_wire_id(kem_id);
  if (!kem || (mac_id != 1 && mac_id != 2)) return Err(KeyMgmtError::kUnsupportedKem);
  return HelloResponse{*kem, mac_id, cert.rest()};
}

std::vector<std::uint8_t> encode_confirm_ack(const ConfirmAck& a) {
  auto out = buffer(9);
  ByteWriter w(out);
  w.u8(kWireVersion);
  w.u16(a.service_id);
  w.u16(a.eventgroup_id);
  w.u32(a.key_id);
  return out;
}

Result<ConfirmAck, KeyMgmtError> parse_confirm_ack(ByteSpan payload) {
  ByteReader r(payload);
  const std::uint8_t version = r.u8();
  ConfirmAck a;
  a.service_id = r.u16();
  a.eventgroup_id = r.u16();
  a.key_id = r.u32();
  if (!r.finish()) return Err(KeyMgmtError::kMalformed);
  if (version != kWireVersion) return Err(KeyMgmtError::kUnsupportedVersion);
  return a;
}

std::vector<std::uint8_t> encode_rekey_notice_body(const RekeyNotice& n) {
  auto out = buffer(kRekeySignedLength);
  ByteWriter w(out);
  w.u8(kWireVersion);
  w.u16(n.service_id);
  w.u16(n.eventgroup_id);
  w.u32(n.key_id);
  w.u8(n.revoke_previous ? 1 : 0);
  w.u64(n.timestamp_ns);
  return out;
}

void append_signature(std::vector<std::uint8_t>& body, ByteSpan signature) {
  const std::size_t at = body.size();
  body.resize(at + 2 + signature.size());
  ByteWriter w(MutableByteSpan(body.data() + at, 2 + signature.size()));
  w.u16(static_cast<std::uint16_t>(signature.size()));
  w.bytes(signature);
}

Result<RekeyNotice, KeyMgmtError> parse_rekey_notice(ByteSpan payload) {
  ByteReader r(payload);
  RekeyNotice n;
  const std::uint8_t version = r.u8();
  n.service_id = r.u16();
  n.eventgroup_id = r.u16();
  n.key_id = r.u32();
  const std::uint8_t flags = r.u8();
  n.timestamp_ns = r.u64();
  ByteReader sig = r.sub_u16_prefixed();
  if (!r.finish() || !sig.ok() || sig.remaining() == 0) return Err(KeyMgmtError::kMalformed);
  if (version != kWireVersion) return Err(KeyMgmtError::kUnsupportedVersion);
  if ((flags & ~0x01u) != 0 || n.key_id == 0) return Err(KeyMgmtError::kMalformed);
  n.revoke_previous = (flags & 0x01u) != 0;
  n.signature = sig.rest();
  n.signed_length = kRekeySignedLength;
  return n;
}

}  // namespace layersec::keymgmt
