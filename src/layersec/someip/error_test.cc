#include "layersec/someip/error.h"

#include <gtest/gtest.h>

#include <vector>

namespace layersec::someip {
namespace {

// Service 0x1234 (interface version 2) with method 0x0001 (request/response)
// and 0x0002 (fire-and-forget).
class Table final : public ServiceTable {
 public:
  bool has_service(std::uint16_t s) const override { return s == 0x1234; }
  std::uint8_t interface_version(std::uint16_t) const override { return 2; }
  MethodKind method(std::uint16_t s, std::uint16_t m) const override {
    if (s != 0x1234) return MethodKind::kNone;
    if (m == 1) return MethodKind::kRequestResponse;
    if (m == 2) return MethodKind::kFireAndForget;
    return MethodKind::kNone;
  }
};

Header request() {
  Header h;
  h.service_id = 0x1234;
  h.method_id = 1;
  h.client_id = 0x99;
  h.session_id = 5;
  h.interface_version = 2;
  h.message_type = MessageType::kRequest;
  return h;
}

TEST(SomeipErrors, PrescribedReturnCodesForRequests) {
  const Table t;
  RxCounters c;
  struct Case {
    Header h;
    RxAction action;
    ReturnCode code;
  };
  std::vector<Case> cases;
  cases.push_back({request(), RxAction::kDeliver, ReturnCode::kOk});
  Header h = request();
  h.protocol_version = 2;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kWrongProtocolVersion});
  h = request();
  h.service_id = 0x4321;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kUnknownService});
  h = request();
  h.method_id = 0x77;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kUnknownMethod});
  h = request();
  h.interface_version = 1;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kWrongInterfaceVersion});
  h = request();
  h.method_id = 2;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kWrongMessageType});
  h = request();
  h.return_code = 1;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kMalformedMessage});
  // Protocol version is checked first.
  h = request();
  h.protocol_version = 0;
  h.service_id = 0x4321;
  cases.push_back({h, RxAction::kReplyError, ReturnCode::kWrongProtocolVersion});
  for (const auto& k : cases) {
    const RxVerdict v = check_server_message(k.h, t);
    c.count(v);
    EXPECT_EQ(v.action, k.action);
    if (v.action == RxAction::kReplyError) {
      EXPECT_EQ(v.code, k.code);
    }
  }
  EXPECT_EQ(c.delivered, 1u);
  EXPECT_EQ(c.sent(ReturnCode::kWrongProtocolVersion), 2u);
  EXPECT_EQ(c.sent(ReturnCode::kUnknownService), 1u);
}

TEST(SomeipErrors, NeverAnswerErrorsOrFireAndForget) {
  const Table t;
  for (auto type : {MessageType::kResponse, MessageType::kError, MessageType::kNotification,
                    MessageType::kRequestAck, MessageType::kErrorAck, MessageType::kTpError}) {
    Header h = request();
    h.message_type = type;
    h.service_id = 0x4321;  // would be E_UNKNOWN_SERVICE for a request
    const RxVerdict v = check_server_message(h, t);
    EXPECT_EQ(v.action, RxAction::kDrop);
    EXPECT_EQ(v.reason, DropReason::kNotARequest);
  }
  Header ff = request();
  ff.message_type = MessageType::kRequestNoReturn;
  ff.service_id = 0x4321;
  RxVerdict v = check_server_message(ff, t);
  EXPECT_EQ(v.action, RxAction::kDrop);
  EXPECT_EQ(v.reason, DropReason::kUnknownService);
  ff = request();
  ff.message_type = MessageType::kRequestNoReturn;
  ff.method_id = 2;
  EXPECT_EQ(check_server_message(ff, t).action, RxAction::kDeliver);
  ff.method_id = 1;  // fire-and-forget to a request/response method
  v = check_server_message(ff, t);
  EXPECT_EQ(v.action, RxAction::kDrop);
  EXPECT_EQ(v.reason, DropReason::kWrongMessageType);
}

TEST(SomeipErrors, MalformedFraming) {
  std::vector<std::uint8_t> buf(40, 0);
  ByteWriter w(buf);
  ASSERT_TRUE(write_header(w, request(), 24));
  // Length lies (past the datagram) on a REQUEST -> E_MALFORMED_MESSAGE.
  store_be32(buf.data() + 4, 100);
  auto m = parse_message(buf);
  ASSERT_FALSE(m.ok());
  RxVerdict v = check_malformed(buf, m.error());
  EXPECT_EQ(v.action, RxAction::kReplyError);
  EXPECT_EQ(v.code, ReturnCode::kMalformedMessage);
  // Length < 8: ignored (feat_req_someip_798).
  store_be32(buf.data() + 4, 4);
  auto m2 = parse_message(buf);
  ASSERT_FALSE(m2.ok());
  v = check_malformed(buf, m2.error());
  EXPECT_EQ(v.action, RxAction::kDrop);
  EXPECT_EQ(v.reason, DropReason::kLengthTooSmall);
  // Same broken framing on a RESPONSE: dropped.
  store_be32(buf.data() + 4, 100);
  buf[14] = 0x80;
  auto m3 = parse_message(buf);
  ASSERT_FALSE(m3.ok());
  EXPECT_EQ(check_malformed(buf, m3.error()).action, RxAction::kDrop);
  // Fewer than 16 bytes: dropped.
  EXPECT_EQ(check_malformed(ByteSpan(buf.data(), 10), ParseError::kTruncatedHeader).reason,
            DropReason::kTruncatedHeader);
}

TEST(SomeipErrors, ErrorResponseCopiesIds) {
  Header req = request();
  req.protocol_version = 7;
  std::vector<std::uint8_t> buf(16);
  ByteWriter w(buf);
  ASSERT_TRUE(write_error_response(w, req, ReturnCode::kWrongProtocolVersion));
  auto m = parse_message(buf);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->header.message_id(), req.message_id());
  EXPECT_EQ(m->header.request_id(), req.request_id());
  EXPECT_EQ(m->header.message_type, MessageType::kError);
  EXPECT_EQ(m->header.return_code, 0x07);
  EXPECT_EQ(m->header.protocol_version, kProtocolVersion);
  EXPECT_EQ(m->header.interface_version, 2);
  EXPECT_EQ(m->header.length, 8u);
}

}  // namespace
}  // namespace layersec::someip
