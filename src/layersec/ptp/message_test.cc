// Codec tests: byte-exact round trips of frames captured from linuxptp 3.1.1
// (ptp4l -S -f gPTP.cfg over a veth pair, tshark), hand-built messages of
// every type, and every ParseError.
#include "layersec/ptp/message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/base/hex.h"

namespace layersec::ptp {
namespace {

std::vector<std::uint8_t> unhex(const std::string& s) {
  std::vector<std::uint8_t> v;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) v.push_back(static_cast<std::uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return v;
}

// Captured from ptp4l 3.1.1 (minorVersionPTP 0), whole Ethernet frames without FCS.
const char* kPtp4lSync =
    "0180c200000ea2714e09925c88f71002002c00000200000000000000000000000000a2714efffe09925c0001000c00fd00000000000000000000";
const char* kPtp4lFollowUp =
    "0180c200000ea2714e09925c88f71802004c00000000000000000000000000000000a2714efffe09925c0001000c02fd00006b0fbf2d084a4e3c"
    "0003001c0080c200000100000000000000000000000000000000000000000000";
const char* kPtp4lPdelayReq =
    "0180c200000e222e2443644b88f71202003600000000000000000000000000000000222e24fffe43644b0001000405000000000000000000000000"
    "000000000000000000";
const char* kPtp4lPdelayResp =
    "0180c200000ea2714e09925c88f71302003600000200000000000000000000000000a2714efffe09925c00010004057f00006b0fbf2d0b5f4798"
    "222e24fffe43644b0001";
const char* kPtp4lPdelayRespFollowUp =
    "0180c200000ea2714e09925c88f71a02003600000000000000000000000000000000a2714efffe09925c00010004057f00006b0fbf2d0b604695"
    "222e24fffe43644b0001";
const char* kPtp4lAnnounce =
    "0180c200000ea2714e09925c88f71b02004c00000000000000000000000000000000a2714efffe09925c00010002050000000000000000000000"
    "002500f8f8fefffff8a2714efffe09925c0000a000080008a2714efffe09925c";

void expect_frame_round_trip(const char* hex, MessageType type) {
  const auto frame = unhex(hex);
  auto parsed = parse_frame(frame);
  ASSERT_TRUE(parsed.ok()) << to_string(parsed.error());
  EXPECT_EQ(parsed->message.header.type, type);
  EXPECT_EQ(parsed->message.header.minor_version, 0);
  std::vector<std::uint8_t> out(kMaxFrameSize);
  const std::size_t n = encode_frame(parsed->message, parsed->src, out);
  out.resize(n);
  EXPECT_EQ(out, frame) << to_string(type);
}

TEST(PtpMessage, Ptp4lFramesRoundTripByteExact) {
  expect_frame_round_trip(kPtp4lSync, MessageType::kSync);
  expect_frame_round_trip(kPtp4lFollowUp, MessageType::kFollowUp);
  expect_frame_round_trip(kPtp4lPdelayReq, MessageType::kPdelayReq);
  expect_frame_round_trip(kPtp4lPdelayResp, MessageType::kPdelayResp);
  expect_frame_round_trip(kPtp4lPdelayRespFollowUp, MessageType::kPdelayRespFollowUp);
  expect_frame_round_trip(kPtp4lAnnounce, MessageType::kAnnounce);
}

TEST(PtpMessage, Ptp4lFieldsDecode) {
  auto fu = parse_frame(unhex(kPtp4lFollowUp));
  ASSERT_TRUE(fu.ok());
  EXPECT_EQ(fu->message.header.source.clock_identity, 0xa2714efffe09925cULL);
  EXPECT_EQ(fu->message.header.source.port_number, 1);
  EXPECT_EQ(fu->message.header.sequence_id, 12);
  EXPECT_EQ(fu->message.header.log_interval, -3);
  EXPECT_EQ(fu->message.timestamp.seconds, 0x6b0fbf2dULL);
  EXPECT_EQ(fu->message.timestamp.nanoseconds, 0x084a4e3cU);
  auto resp = parse_frame(unhex(kPtp4lPdelayResp));
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->message.port.clock_identity, 0x222e24fffe43644bULL);
  EXPECT_EQ(resp->message.header.flags, kFlagTwoStep);
  auto an = parse_frame(unhex(kPtp4lAnnounce));
  ASSERT_TRUE(an.ok());
  EXPECT_EQ(an->message.announce.priority1, 248);
  EXPECT_EQ(an->message.announce.quality.clock_class, 248);
  EXPECT_EQ(an->message.announce.current_utc_offset, 37);
  ASSERT_TRUE(an->message.announce.has_path_trace);
  ASSERT_EQ(an->message.announce.path_trace_count, 1);
  EXPECT_EQ(an->message.announce.path_trace[0], 0xa2714efffe09925cULL);
}

Message sample(MessageType type) {
  Message m;
  m.header.type = type;
  m.header.minor_version = 1;
  m.header.sequence_id = 0x1234;
  m.header.source = PortIdentity{0x0200000000000001ULL, 1};
  m.header.correction = 0x12345;
  m.header.log_interval = -3;
  m.timestamp = Timestamp{1700000000, 999999999};
  m.port = PortIdentity{0x0200000000000002ULL, 7};
  m.follow_up.cumulative_scaled_rate_offset = -123456;
  m.announce.grandmaster_identity = 0x0200000000000003ULL;
  m.announce.has_path_trace = true;
  m.announce.path_trace_count = 2;
  m.announce.path_trace[0] = 0x0200000000000003ULL;
  m.announce.path_trace[1] = 0x0200000000000004ULL;
  m.has_interval_request = true;
  m.interval.time_sync_interval = 0;
  return m;
}

TEST(PtpMessage, EveryTypeRoundTrips) {
  for (MessageType t : {MessageType::kSync, MessageType::kFollowUp, MessageType::kPdelayReq, MessageType::kPdelayResp,
                        MessageType::kPdelayRespFollowUp, MessageType::kAnnounce, MessageType::kSignaling}) {
    const Message m = sample(t);
    std::vector<std::uint8_t> buf(kMaxMessageSize);
    const std::size_t n = encode_message(m, buf);
    ASSERT_GT(n, kHeaderSize) << to_string(t);
    auto back = parse_message(ByteSpan(buf.data(), n));
    ASSERT_TRUE(back.ok()) << to_string(t) << ": " << to_string(back.error());
    std::vector<std::uint8_t> again(kMaxMessageSize);
    ASSERT_EQ(encode_message(*back, again), n);
    EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n), again.begin())) << to_string(t);
    EXPECT_EQ(back->header.sequence_id, 0x1234);
    EXPECT_EQ(back->header.correction, 0x12345);
  }
  // Sizes fixed by 802.1AS-2020 §11.4 / §10.6.
  std::vector<std::uint8_t> buf(kMaxMessageSize);
  EXPECT_EQ(encode_message(sample(MessageType::kSync), buf), 44U);
  EXPECT_EQ(encode_message(sample(MessageType::kFollowUp), buf), 76U);
  EXPECT_EQ(encode_message(sample(MessageType::kPdelayReq), buf), 54U);
  EXPECT_EQ(encode_message(sample(MessageType::kAnnounce), buf), 64U + 4 + 16);
  EXPECT_EQ(encode_message(sample(MessageType::kSignaling), buf), 60U);
}

std::vector<std::uint8_t> message_bytes(const char* frame_hex) {
  auto f = unhex(frame_hex);
  f.erase(f.begin(), f.begin() + 14);
  return f;
}

TEST(PtpMessage, RefusesMalformed) {
  auto fu = message_bytes(kPtp4lFollowUp);
  EXPECT_EQ(parse_message(ByteSpan(fu.data(), 20)).error(), ParseError::kTruncated);
  auto bad = fu;
  bad[0] = 0x08;  // majorSdoId 0: a PTPv2 (1588) message, not gPTP
  EXPECT_EQ(parse_message(bad).error(), ParseError::kTransportSpecific);
  bad = fu;
  bad[1] = 0x22;  // minorVersionPTP 2
  EXPECT_EQ(parse_message(bad).error(), ParseError::kVersion);
  bad = fu;
  bad[1] = 0x03;  // versionPTP 3
  EXPECT_EQ(parse_message(bad).error(), ParseError::kVersion);
  bad = fu;
  bad[1] = 0x12;  // minorVersionPTP 1 (802.1AS-2020, linuxptp 4.x) is accepted
  EXPECT_TRUE(parse_message(bad).ok());
  bad = fu;
  bad[0] = 0x11;  // Delay_Req: not used by gPTP
  EXPECT_EQ(parse_message(bad).error(), ParseError::kUnknownType);
  bad = fu;
  bad[40] = 0x3B;  // nanoseconds 0x3B9ACA00.. = 10^9
  bad[41] = 0x9A;
  bad[42] = 0xCA;
  bad[43] = 0x00;
  EXPECT_EQ(parse_message(bad).error(), ParseError::kTimestamp);
  bad = fu;
  bad[45] = 0x08;  // TLV type PATH_TRACE where the Follow_Up information TLV belongs
  EXPECT_EQ(parse_message(bad).error(), ParseError::kTlv);
  bad = fu;
  bad.push_back(0);
  EXPECT_EQ(parse_message(bad).error(), ParseError::kTrailingBytes);
  bad = fu;
  bad[3] = 0x4A;  // messageLength 74 with 76 bytes
  EXPECT_EQ(parse_message(bad).error(), ParseError::kTrailingBytes);
  bad = fu;
  bad[3] = 0x20;  // messageLength below the header
  EXPECT_EQ(parse_message(bad).error(), ParseError::kLength);
  auto sync = message_bytes(kPtp4lSync);
  sync[3] = 40;  // a Sync of 40 bytes: too short for its body
  sync.resize(40);
  EXPECT_EQ(parse_message(sync).error(), ParseError::kLength);
  auto frame = unhex(kPtp4lSync);
  frame[12] = 0x88;
  frame[13] = 0xBA;
  EXPECT_EQ(parse_frame(frame).error(), ParseError::kEtherType);
  frame = unhex(kPtp4lSync);
  frame.push_back(0);
  frame.push_back(0);  // the Ethernet pad to 60 octets is accepted
  EXPECT_TRUE(parse_frame(frame).ok());
  frame.back() = 1;  // a non-zero pad is not
  EXPECT_EQ(parse_frame(frame).error(), ParseError::kTrailingBytes);
}

TEST(PtpMessage, TimestampAndIdentityHelpers) {
  EXPECT_EQ(clock_identity_from_mac({0xa2, 0x71, 0x4e, 0x09, 0x92, 0x5c}), 0xa2714efffe09925cULL);
  const Timestamp t{1700000000, 123456789};
  EXPECT_EQ(from_ns(to_ns(t)), t);
  EXPECT_EQ(to_ns(t), 1700000000123456789LL);
}

}  // namespace
}  // namespace layersec::ptp
