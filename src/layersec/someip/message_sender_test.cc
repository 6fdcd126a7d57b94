// MessageSender on its own over a RecordingWriter: one datagram up to 1400
// payload bytes, SOME/IP-TP segments above (reassembling to the message),
// limits and writer errors, and one protection for a message sent to several
// destinations.
#include "layersec/someip/message_sender.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/someip/fake_io_test_support.h"
#include "layersec/someip/runtime_secoc_test_support.h"
#include "layersec/someip/tp.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

const Endpoint kTo{IpAddress::v4(10, 0, 0, 2), kClientPort, L4Proto::kUdp};

Header notification(std::uint16_t session) {
  Header h;
  h.service_id = kService;
  h.method_id = kEvent;
  h.session_id = session;
  h.interface_version = 1;
  h.message_type = MessageType::kNotification;
  return h;
}

struct Fixture {
  RuntimeConfig cfg = server_config();
  RuntimeCounters counters;
  RecordingWriter io{IpAddress::v4(10, 0, 0, 1)};
  SecocFilter secoc{cfg, counters};
  std::unique_ptr<MessageSender> sender;
  explicit Fixture(std::size_t max = 65536, std::size_t segment = 1392) {
    cfg.max_message_size = max;
    cfg.tp_segment_size = segment;
    sender = std::make_unique<MessageSender>(cfg, io, secoc, counters);
    io.send_unbound = true;
  }
};

TEST(MessageSenderTest, SmallMessageIsOneDatagram) {
  Fixture f;
  const std::vector<std::uint8_t> payload(1400, 0x5A);
  auto msg = f.sender->prepare(notification(3), payload, std::nullopt);
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(f.sender->transmit(kServicePort, kTo, *msg).ok());
  ASSERT_EQ(f.io.sent.size(), 1u);
  EXPECT_EQ(f.io.sent[0].from_port, kServicePort);
  EXPECT_EQ(f.io.sent[0].to, kTo);
  auto m = parse_message(f.io.sent[0].bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->header.session_id, 3);
  EXPECT_EQ(m->header.message_type, MessageType::kNotification);
  EXPECT_EQ(std::vector<std::uint8_t>(m->payload.begin(), m->payload.end()), payload);
  EXPECT_EQ(f.counters.tp_segments_sent, 0u);
}

TEST(MessageSenderTest, LargeMessageGoesAsTpSegmentsThatReassemble) {
  Fixture f(65536, 1024);
  std::vector<std::uint8_t> payload(5000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
  auto msg = f.sender->prepare(notification(1), payload, std::nullopt);
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(f.sender->transmit(kServicePort, kTo, *msg).ok());
  ASSERT_EQ(f.io.sent.size(), 5u);  // ceil(5000 / 1024)
  EXPECT_EQ(f.counters.tp_segments_sent, 5u);
  TpReassembler tp;
  std::optional<std::vector<std::uint8_t>> whole;
  for (const auto& d : f.io.sent) {
    EXPECT_LE(d.bytes.size(), kHeaderSize + kTpHeaderSize + 1024);
    auto m = parse_message(d.bytes);
    ASSERT_TRUE(m.ok());
    EXPECT_TRUE(is_tp(m->header.message_type));
    auto seg = parse_tp_segment(*m);
    ASSERT_TRUE(seg.ok());
    auto out = tp.on_segment(TimePoint{}, kTo, *seg);
    ASSERT_TRUE(out.ok());
    if (out->status == TpReassembler::Status::kComplete) whole.emplace(out->message.begin(), out->message.end());
  }
  ASSERT_TRUE(whole.has_value());
  auto m = parse_message(*whole);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(std::vector<std::uint8_t>(m->payload.begin(), m->payload.end()), payload);
}

TEST(MessageSenderTest, LimitsAndWriterErrors) {
  Fixture f(100);
  auto big = f.sender->prepare(notification(1), std::vector<std::uint8_t>(101), std::nullopt);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error(), RuntimeError::kTooLarge);
  auto msg = f.sender->prepare(notification(1), std::vector<std::uint8_t>(10), std::nullopt);
  ASSERT_TRUE(msg.ok());
  f.io.fail_sends = true;
  auto st = f.sender->transmit(kServicePort, kTo, *msg);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), RuntimeError::kTransport);
  EXPECT_EQ(f.counters.transport_errors, 1u);
}

TEST(MessageSenderTest, ProtectedOnceForEveryDestination) {
  ManualClock clock{TimePoint{} + Duration::seconds(10)};
  SecocNode sec;
  sec.start(server_engine_config(Duration::seconds(1)), clock.now());
  Fixture f;
  f.secoc.attach(*sec.engine, server_bindings(), clock);
  auto route = f.secoc.outbound(kService, kInstance, kEvent);
  ASSERT_TRUE(route.ok() && route->has_value());
  const std::vector<std::uint8_t> payload{1, 2, 3, 4};
  auto msg = f.sender->prepare(notification(1), payload, *route);
  ASSERT_TRUE(msg.ok());
  EXPECT_GT(msg->size(), kHeaderSize + payload.size());  // the Secured I-PDU
  for (std::uint8_t host : {2, 3, 4})
    ASSERT_TRUE(f.sender->transmit(kServicePort, Endpoint{IpAddress::v4(10, 0, 0, host), kClientPort, L4Proto::kUdp},
                                   *msg)
                    .ok());
  EXPECT_EQ(f.counters.secoc_protected, 1u);
  ASSERT_EQ(f.io.sent.size(), 3u);
  EXPECT_EQ(f.io.sent[0].bytes, f.io.sent[2].bytes);
  auto m = parse_message(f.io.sent[0].bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->header.length, kLengthHeaderPart + msg->size() - kHeaderSize);
}

}  // namespace
}  // namespace layersec::someip
