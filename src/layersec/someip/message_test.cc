#include "layersec/someip/message.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/base/hex.h"
#include "layersec/someip/error.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {
namespace {

std::vector<std::uint8_t> encode(const Header& h, ByteSpan payload) {
  std::vector<std::uint8_t> buf(kHeaderSize + payload.size());
  ByteWriter w(buf);
  EXPECT_TRUE(write_message(w, h, payload));
  EXPECT_EQ(w.size(), buf.size());
  return buf;
}

TEST(SomeipHeader, EncodesBigEndianLayout) {
  Header h;
  h.service_id = 0x1234;
  h.method_id = 0x8001;
  h.client_id = 0xABCD;
  h.session_id = 0x0102;
  h.interface_version = 0x05;
  h.message_type = MessageType::kNotification;
  h.return_code = 0;
  const std::vector<std::uint8_t> payload = {0xDE, 0xAD};
  const auto bytes = encode(h, payload);
  EXPECT_EQ(to_hex(bytes), "12348001" "0000000a" "abcd0102" "01050200" "dead");
  auto m = parse_message(bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->header.message_id(), 0x12348001u);
  EXPECT_EQ(m->header.request_id(), 0xABCD0102u);
  EXPECT_EQ(m->header.length, 10u);
  EXPECT_EQ(m->payload.size(), 2u);
}

TEST(SomeipHeader, RoundTripsEveryMessageTypeAndReturnCode) {
  const std::uint8_t types[] = {0x00, 0x01, 0x02, 0x40, 0x41, 0x42, 0x80, 0x81,
                                0xC0, 0xC1, 0x20, 0x21, 0x22, 0xA0, 0xA1};
  for (std::uint8_t t : types) {
    for (std::uint8_t rc = 0; rc <= 0x3F; ++rc) {
      Header h;
      h.service_id = 0x4242;
      h.method_id = static_cast<std::uint16_t>(t * 3);
      h.client_id = 7;
      h.session_id = rc;
      h.interface_version = 2;
      h.message_type = static_cast<MessageType>(t);
      h.return_code = rc;
      const std::vector<std::uint8_t> payload(is_tp(h.message_type) ? 4 : 0, 0);
      const auto bytes = encode(h, payload);
      auto m = parse_message(bytes);
      ASSERT_TRUE(m.ok()) << int(t);
      Header expect = h;
      expect.length = static_cast<std::uint32_t>(8 + payload.size());
      EXPECT_EQ(m->header, expect);
    }
    EXPECT_TRUE(is_known_message_type(t));
    EXPECT_NE(to_string(static_cast<MessageType>(t)), "UNKNOWN");
  }
  EXPECT_EQ(without_tp(MessageType::kTpResponse), MessageType::kResponse);
  EXPECT_EQ(with_tp(MessageType::kError), MessageType::kTpError);
  EXPECT_EQ(return_code_name(0x09), "E_MALFORMED_MESSAGE");
  EXPECT_EQ(return_code_name(0x0F), "E_E2E_NO_NEW_DATA");
  EXPECT_EQ(return_code_name(0x25), "SERVICE_SPECIFIC");
}

TEST(SomeipHeader, RejectsUnknownMessageTypes) {
  for (int t = 0; t < 256; ++t) {
    Header h;
    h.message_type = static_cast<MessageType>(t);
    std::vector<std::uint8_t> payload(8, 0);
    const auto bytes = encode(h, payload);
    auto m = parse_message(bytes);
    EXPECT_EQ(m.ok(), is_known_message_type(static_cast<std::uint8_t>(t))) << t;
    if (!m.ok()) {
      EXPECT_EQ(m.error(), ParseError::kUnknownMessageType);
    }
  }
}

TEST(SomeipHeader, LengthFieldLies) {
  Header h;
  h.service_id = 1;
  auto bytes = encode(h, std::vector<std::uint8_t>(4, 0xAA));
  // Length larger than the datagram.
  store_be32(bytes.data() + 4, 13);
  auto m = parse_message(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error(), ParseError::kLengthBeyondDatagram);
  // Length smaller than the datagram: trailing bytes.
  store_be32(bytes.data() + 4, 10);
  auto t = parse_message(bytes);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error(), ParseError::kTrailingBytes);
  // Length below 8 (feat_req_someip_798).
  store_be32(bytes.data() + 4, 7);
  auto s = parse_message(bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), ParseError::kLengthTooSmall);
  // Huge length does not overflow.
  store_be32(bytes.data() + 4, 0xFFFFFFFF);
  auto b = parse_message(bytes);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error(), ParseError::kLengthBeyondDatagram);
  // Truncated header.
  auto tr = parse_message(ByteSpan(bytes.data(), 15));
  ASSERT_FALSE(tr.ok());
  EXPECT_EQ(tr.error(), ParseError::kTruncatedHeader);
  // TP type without room for the TP header.
  Header tp;
  tp.message_type = MessageType::kTpRequest;
  const auto tpb = encode(tp, std::vector<std::uint8_t>(3, 0));
  auto tm = parse_message(tpb);
  ASSERT_FALSE(tm.ok());
  EXPECT_EQ(tm.error(), ParseError::kTruncatedTpHeader);
}

TEST(SomeipDatagram, SeveralMessagesInOneDatagram) {
  std::vector<std::uint8_t> dgram;
  for (int i = 0; i < 3; ++i) {
    Header h;
    h.service_id = static_cast<std::uint16_t>(0x100 + i);
    h.session_id = static_cast<std::uint16_t>(i + 1);
    const auto b = encode(h, std::vector<std::uint8_t>(static_cast<std::size_t>(i * 5), 0x11));
    dgram.insert(dgram.end(), b.begin(), b.end());
  }
  DatagramIterator it(dgram);
  int n = 0;
  while (!it.done()) {
    auto m = it.next();
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m->header.service_id, 0x100 + n);
    EXPECT_EQ(m->payload.size(), static_cast<std::size_t>(n * 5));
    ++n;
  }
  EXPECT_EQ(n, 3);
  // A truncated tail yields the error once and stops.
  dgram.push_back(0x01);
  DatagramIterator bad(dgram);
  int ok = 0;
  bool failed = false;
  while (!bad.done()) {
    auto m = bad.next();
    if (m.ok()) {
      ++ok;
    } else {
      failed = true;
      EXPECT_EQ(m.error(), ParseError::kTruncatedHeader);
    }
  }
  EXPECT_EQ(ok, 3);
  EXPECT_TRUE(failed);
}

}  // namespace
}  // namespace layersec::someip
