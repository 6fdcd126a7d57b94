// Codecs of the key-management service payloads (wire.h): round trips, every
// truncation, trailing bytes, versions, flags, and the return-code mapping.
#include "layersec/keymgmt/wire.h"

#include <gtest/gtest.h>

namespace layersec::keymgmt {
namespace {

TEST(KeyMgmtWire, HelloRoundTripSkipsUnknownKemIds) {
  const auto bytes = encode_hello({{kex::KemScheme::kMlKem768, kex::KemScheme::kX25519}});
  ASSERT_EQ(bytes.size(), 4u);
  auto h = parse_hello(bytes);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->kems, (std::vector<kex::KemScheme>{kex::KemScheme::kMlKem768, kex::KemScheme::kX25519}));
  std::vector<std::uint8_t> unknown = {1, 2, 0xEE, kex::kem_wire_id(kex::KemScheme::kX25519)};
  auto u = parse_hello(unknown);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kems, std::vector<kex::KemScheme>{kex::KemScheme::kX25519});
}

TEST(KeyMgmtWire, HelloRejectsBadInput) {
  auto bytes = encode_hello({{kex::KemScheme::kX25519}});
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto r = parse_hello(ByteSpan(bytes.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error(), KeyMgmtError::kMalformed);
  }
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(parse_hello(trailing).error(), KeyMgmtError::kMalformed);
  auto version = bytes;
  version[0] = 2;
  EXPECT_EQ(parse_hello(version).error(), KeyMgmtError::kUnsupportedVersion);
  const std::vector<std::uint8_t> empty_list = {1, 0};
  EXPECT_EQ(parse_hello(empty_list).error(), KeyMgmtError::kMalformed);
  std::vector<std::uint8_t> too_many = {1, static_cast<std::uint8_t>(kMaxHelloKems + 1)};
  too_many.resize(2 + kMaxHelloKems + 1, 4);
  EXPECT_EQ(parse_hello(too_many).error(), KeyMgmtError::kMalformed);
}

TEST(KeyMgmtWire, HelloResponseRoundTripAndRejections) {
  const std::vector<std::uint8_t> cert = {0x30, 0x03, 0x02, 0x01, 0x05};
  const auto bytes = encode_hello_response(kex::KemScheme::kRsa2048, 1, cert);
  auto h = parse_hello_response(bytes);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->kem, kex::KemScheme::kRsa2048);
  EXPECT_EQ(h->mac_id, 1);
  EXPECT_EQ(std::vector<std::uint8_t>(h->certificate.begin(), h->certificate.end()), cert);
  for (std::size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(parse_hello_response(ByteSpan(bytes.data(), n)).ok());
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(parse_hello_response(trailing).error(), KeyMgmtError::kMalformed);
  auto bad_mac = bytes;
  bad_mac[2] = 9;
  EXPECT_EQ(parse_hello_response(bad_mac).error(), KeyMgmtError::kUnsupportedKem);
  auto bad_kem = bytes;
  bad_kem[1] = 0xEE;
  EXPECT_EQ(parse_hello_response(bad_kem).error(), KeyMgmtError::kUnsupportedKem);
  const std::vector<std::uint8_t> no_cert = {1, 4, 1, 0, 0};
  EXPECT_EQ(parse_hello_response(no_cert).error(), KeyMgmtError::kMalformed);
}

TEST(KeyMgmtWire, ConfirmAckRoundTrip) {
  const auto bytes = encode_confirm_ack({0x1234, 0x0001, 0xDEADBEEF});
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{1, 0x12, 0x34, 0x00, 0x01, 0xDE, 0xAD, 0xBE, 0xEF}));
  auto a = parse_confirm_ack(bytes);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->service_id, 0x1234);
  EXPECT_EQ(a->eventgroup_id, 1);
  EXPECT_EQ(a->key_id, 0xDEADBEEFu);
  for (std::size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(parse_confirm_ack(ByteSpan(bytes.data(), n)).ok());
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_FALSE(parse_confirm_ack(trailing).ok());
}

TEST(KeyMgmtWire, RekeyNoticeLayoutSignatureAndFlags) {
  RekeyNotice n;
  n.service_id = 0x1234;
  n.eventgroup_id = 2;
  n.key_id = 7;
  n.revoke_previous = true;
  n.timestamp_ns = 0x0102030405060708ULL;
  auto bytes = encode_rekey_notice_body(n);
  ASSERT_EQ(bytes.size(), kRekeySignedLength);
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{1, 0x12, 0x34, 0, 2, 0, 0, 0, 7, 1, 1, 2, 3, 4, 5, 6, 7, 8}));
  const std::vector<std::uint8_t> sig = {0xAA, 0xBB, 0xCC};
  append_signature(bytes, sig);
  auto p = parse_rekey_notice(bytes);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->key_id, 7u);
  EXPECT_TRUE(p->revoke_previous);
  EXPECT_EQ(p->timestamp_ns, n.timestamp_ns);
  EXPECT_EQ(std::vector<std::uint8_t>(p->signature.begin(), p->signature.end()), sig);
  EXPECT_EQ(p->signed_length, kRekeySignedLength);
  for (std::size_t k = 0; k < bytes.size(); ++k) EXPECT_FALSE(parse_rekey_notice(ByteSpan(bytes.data(), k)).ok());
  auto flags = bytes;
  flags[9] = 0x03;  // a reserved flag bit
  EXPECT_EQ(parse_rekey_notice(flags).error(), KeyMgmtError::kMalformed);
  auto zero_id = bytes;
  zero_id[8] = 0;
  EXPECT_EQ(parse_rekey_notice(zero_id).error(), KeyMgmtError::kMalformed);
  auto no_sig = encode_rekey_notice_body(n);
  append_signature(no_sig, {});
  EXPECT_EQ(parse_rekey_notice(no_sig).error(), KeyMgmtError::kMalformed);
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(parse_rekey_notice(trailing).error(), KeyMgmtError::kMalformed);
}

TEST(KeyMgmtWire, ReturnCodesRoundTripForEveryReportedReason) {
  for (std::size_t i = 0; i < kKeyMgmtErrorCount; ++i) {
    const auto e = static_cast<KeyMgmtError>(i);
    EXPECT_FALSE(to_string(e).empty());
    const auto rc = static_cast<std::uint8_t>(to_return_code(e));
    EXPECT_GE(rc, 0x20);  // service-specific range
    EXPECT_LE(rc, 0x3F);
    const KeyMgmtError back = from_return_code(to_return_code(e));
    // Client-local reasons are reported as internal or malformed on the wire.
    if (rc != static_cast<std::uint8_t>(KeyReturnCode::kInternal) &&
        rc != static_cast<std::uint8_t>(KeyReturnCode::kMalformed)) {
      EXPECT_EQ(back, e) << to_string(e);
    }
  }
  EXPECT_EQ(from_return_code(someip::ReturnCode::kTimeout), KeyMgmtError::kTimeout);
  EXPECT_EQ(from_return_code(someip::ReturnCode::kNotOk), KeyMgmtError::kProtocol);
  EXPECT_EQ(from_mode_b(kex::ModeBError::kUnauthorisedService), KeyMgmtError::kUnauthorised);
  EXPECT_EQ(from_mode_b(kex::ModeBError::kReplay), KeyMgmtError::kReplay);
  EXPECT_EQ(from_mode_b(kex::ModeBError::kCertExpired), KeyMgmtError::kCertificate);
}

TEST(KeyMgmtWire, ServiceConfigsMatchTheIds) {
  ServiceIds ids;
  ids.service_id = 0x7777;
  const auto s = service_config(ids);
  EXPECT_EQ(s.service_id, 0x7777);
  ASSERT_EQ(s.methods.size(), 5u);
  for (const auto& m : s.methods) EXPECT_FALSE(m.fire_and_forget);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].event_id, ids.rekey_event);
  const auto c = client_config(ids);
  EXPECT_EQ(c.service_id, 0x7777);
  EXPECT_EQ(c.eventgroups, std::vector<std::uint16_t>{ids.rekey_eventgroup});
}

}  // namespace
}  // namespace layersec::keymgmt
