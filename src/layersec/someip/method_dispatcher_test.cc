// MethodDispatcher on its own over a RecordingWriter: requests answered by
// handlers, field getters and setters, the error policy's answers, a handler
// that stops the runtime, and the fail-closed rules of a SecOC port (no
// unauthenticated answer, unverified requests never reach a handler).
#include "layersec/someip/method_dispatcher.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/someip/fake_io_test_support.h"
#include "layersec/someip/runtime_secoc_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

const Endpoint kClient{IpAddress::v4(10, 0, 0, 2), kClientPort, L4Proto::kUdp};

struct Recorder final : MethodDispatcher::Delegate {
  std::vector<std::vector<std::uint8_t>> fields_set;
  bool run = true;
  void on_field_set(std::size_t service, EventPublisher::Event& e) override {
    EXPECT_EQ(service, 0u);
    fields_set.push_back(e.value);
  }
  bool running() const override { return run; }
};

struct Fixture {
  RuntimeConfig cfg = secured_server_config();
  RuntimeCounters counters;
  RecordingWriter io{IpAddress::v4(10, 0, 0, 1)};
  SecocFilter secoc{cfg, counters};
  MessageSender sender{cfg, io, secoc, counters};
  EventPublisher events{cfg.services};
  Recorder rec;
  MethodDispatcher d{cfg, secoc, sender, events, counters, rec};
  Fixture() { io.send_unbound = true; }

  // Serves a request (client 0x0002, session 5) and returns what was sent.
  std::vector<SentDatagram> serve(std::uint16_t method, std::vector<std::uint8_t> payload,
                                  MessageType type = MessageType::kRequest, std::uint8_t version = 1,
                                  std::uint16_t service = kService) {
    Header h;
    h.service_id = service;
    h.method_id = method;
    h.client_id = 0x0002;
    h.session_id = 5;
    h.interface_version = version;
    h.message_type = type;
    std::vector<std::uint8_t> bytes(kHeaderSize + payload.size());
    ByteWriter w(bytes);
    EXPECT_TRUE(write_message(w, h, payload));
    auto m = parse_message(bytes);
    EXPECT_TRUE(m.ok());
    io.sent.clear();
    d.serve(kServicePort, kClient, *m);
    return io.sent;
  }
};

struct Answer {
  Header header;
  std::vector<std::uint8_t> payload;
};
Answer answer(const SentDatagram& s) {
  auto m = parse_message(s.bytes);
  EXPECT_TRUE(m.ok());
  return Answer{m->header, std::vector<std::uint8_t>(m->payload.begin(), m->payload.end())};
}

TEST(MethodDispatcherTest, HandlerAnswersToTheSource) {
  Fixture f;
  ASSERT_TRUE(f.d.set_handler(kService, kInstance, kMethod, [](const Request& r, Reply& reply) {
    EXPECT_EQ(r.client_id, 0x0002);
    EXPECT_EQ(r.session_id, 5);
    EXPECT_EQ(r.source, kClient);
    reply.payload.assign(r.payload.rbegin(), r.payload.rend());
  }).ok());
  auto sent = f.serve(kMethod, {1, 2, 3});
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].from_port, kServicePort);
  EXPECT_EQ(sent[0].to, kClient);
  const Answer a = answer(sent[0]);
  EXPECT_EQ(a.header.message_type, MessageType::kResponse);
  EXPECT_EQ(a.header.session_id, 5);
  EXPECT_EQ(a.header.client_id, 0x0002);
  EXPECT_EQ(a.payload, (std::vector<std::uint8_t>{3, 2, 1}));
  EXPECT_EQ(f.counters.requests_served, 1u);
  // A handler's code other than kOk is an ERROR with that code.
  ASSERT_TRUE(f.d.set_handler(kService, kInstance, kMethod, [](const Request&, Reply& reply) {
    reply.code = ReturnCode::kNotOk;
  }).ok());
  sent = f.serve(kMethod, {});
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(answer(sent[0]).header.message_type, MessageType::kError);
  EXPECT_EQ(answer(sent[0]).header.return_code, static_cast<std::uint8_t>(ReturnCode::kNotOk));
}

TEST(MethodDispatcherTest, ErrorPolicyAnswers) {
  Fixture f;
  EXPECT_FALSE(f.d.set_handler(kService, kInstance, 0x0077, [](const Request&, Reply&) {}).ok());
  EXPECT_FALSE(f.d.set_handler(kService, 9, kMethod, [](const Request&, Reply&) {}).ok());
  auto code = [&](const std::vector<SentDatagram>& s) {
    EXPECT_EQ(s.size(), 1u);
    return s.empty() ? ReturnCode::kOk : static_cast<ReturnCode>(answer(s[0]).header.return_code);
  };
  EXPECT_EQ(code(f.serve(kMethod, {})), ReturnCode::kNotReady);  // no handler yet
  EXPECT_TRUE(f.serve(kFireAndForget, {}, MessageType::kRequestNoReturn).empty());
  EXPECT_EQ(code(f.serve(0x0077, {})), ReturnCode::kUnknownMethod);
  EXPECT_EQ(code(f.serve(kMethod, {}, MessageType::kRequest, 7)), ReturnCode::kWrongInterfaceVersion);
  EXPECT_EQ(code(f.serve(kMethod, {}, MessageType::kRequest, 1, 0x4321)), ReturnCode::kUnknownService);
}

TEST(MethodDispatcherTest, FieldGetterAndSetter) {
  Fixture f;
  EXPECT_TRUE(answer(f.serve(kFieldGetter, {})[0]).payload.empty());
  auto sent = f.serve(kFieldSetter, {7, 8});
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(answer(sent[0]).payload, (std::vector<std::uint8_t>{7, 8}));
  ASSERT_EQ(f.rec.fields_set.size(), 1u);  // the runtime notifies subscribers
  EXPECT_EQ(f.rec.fields_set[0], (std::vector<std::uint8_t>{7, 8}));
  EXPECT_EQ(answer(f.serve(kFieldGetter, {})[0]).payload, (std::vector<std::uint8_t>{7, 8}));
  EXPECT_TRUE(f.events.find(0, kField)->has_value);
}

TEST(MethodDispatcherTest, NoAnswerOnceAHandlerStoppedTheRuntime) {
  Fixture f;
  ASSERT_TRUE(f.d.set_handler(kService, kInstance, kMethod, [&](const Request&, Reply&) { f.rec.run = false; }).ok());
  EXPECT_TRUE(f.serve(kMethod, {1}).empty());
  EXPECT_EQ(f.counters.requests_served, 1u);
}

TEST(MethodDispatcherTest, SecocPortFailsClosed) {
  ManualClock clock{TimePoint{} + Duration::seconds(10)};
  SecocNode sec;
  sec.start(server_engine_config(Duration::seconds(1)), clock.now());
  Fixture f;
  f.secoc.attach(*sec.engine, server_bindings(), clock);
  int ran = 0;
  ASSERT_TRUE(f.d.set_handler(kService, kInstance, kMethod, [&](const Request&, Reply&) { ++ran; }).ok());
  // An unprotected request on the bound method: rejected, nothing answered.
  EXPECT_TRUE(f.serve(kMethod, {1, 2}).empty());
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(f.counters.secoc_rejected, 1u);
  // An unbound id of the SecOC service: rejected as unbound, no error reply.
  EXPECT_TRUE(f.serve(0x0077, {}).empty());
  EXPECT_EQ(f.counters.secoc_unbound_rejected, 1u);
  // An unknown service on this SecOC port: the error policy's answer would
  // go out unauthenticated, so it is refused.
  EXPECT_TRUE(f.serve(kMethod, {}, MessageType::kRequest, 1, 0x4321).empty());
  EXPECT_EQ(f.counters.secoc_unbound_refused, 1u);
}

}  // namespace
}  // namespace layersec::someip
