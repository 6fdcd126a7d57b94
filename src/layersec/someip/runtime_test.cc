// The SOME/IP runtime end to end on the simulated segment: SD, request /
// response, fire-and-forget, the error policy, events (unicast and multicast
// above the threshold), fields, SOME/IP-TP, service loss and restart.
#include "layersec/someip/runtime.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/someip/sim_transport.h"
#include "layersec/someip/runtime_test_support.h"

namespace layersec::someip {
namespace {

using testing_support::Bench;
using testing_support::client_config;
using testing_support::Node;
using testing_support::server_config;
using testing_support::kEvent;
using testing_support::kEventgroup;
using testing_support::kField;
using testing_support::kFieldGetter;
using testing_support::kFieldSetter;
using testing_support::kFireAndForget;
using testing_support::kInstance;
using testing_support::kMethod;
using testing_support::kService;
using testing_support::kServicePort;

std::vector<std::uint8_t> bytes(std::initializer_list<std::uint8_t> b) { return b; }

TEST(RuntimeTest, DiscoveryThenRequestResponse) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(0x0042));
  std::vector<std::pair<std::uint16_t, std::uint16_t>> ids;  // client id, session id seen by the server
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [&](const Request& r, Reply& reply) {
    ids.emplace_back(r.client_id, r.session_id);
    reply.payload.assign(r.payload.begin(), r.payload.end());
    reply.payload.push_back(0xEE);
  }).ok());
  std::vector<bool> availability;
  client.rt->on_availability([&](std::uint16_t s, std::uint16_t i, bool up) {
    EXPECT_EQ(s, kService);
    EXPECT_EQ(i, kInstance);
    availability.push_back(up);
  });
  b.start_all();
  EXPECT_FALSE(client.rt->available(kService));
  b.run(Duration::milliseconds(500));
  ASSERT_TRUE(client.rt->available(kService));
  ASSERT_TRUE(client.rt->available(kService, kInstance));
  EXPECT_FALSE(client.rt->available(kService, 7));
  EXPECT_EQ(availability, std::vector<bool>{true});

  std::vector<std::vector<std::uint8_t>> answers;
  for (int i = 0; i < 3; ++i) {
    const auto payload = bytes({1, 2, static_cast<std::uint8_t>(i)});
    auto r = client.rt->request(kService, kInstance, kMethod, payload, [&](const ResponseResult& res) {
      EXPECT_EQ(res.code, ReturnCode::kOk);
      EXPECT_EQ(res.method_id, kMethod);
      answers.emplace_back(res.payload.begin(), res.payload.end());
    });
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, i + 1);  // sessions start at 1
    b.run(Duration::milliseconds(10));
  }
  ASSERT_EQ(answers.size(), 3U);
  EXPECT_EQ(answers[2], bytes({1, 2, 2, 0xEE}));
  ASSERT_EQ(ids.size(), 3U);
  EXPECT_EQ(ids[0], std::make_pair(std::uint16_t{0x0042}, std::uint16_t{1}));
  EXPECT_EQ(ids[2], std::make_pair(std::uint16_t{0x0042}, std::uint16_t{3}));
  EXPECT_EQ(server.rt->counters().requests_served, 3U);
  EXPECT_EQ(client.rt->counters().responses_received, 3U);
  EXPECT_EQ(client.rt->counters().request_timeouts, 0U);
}

TEST(RuntimeTest, ApiErrorsAreTyped) {
  Bench b;
  Node& client = b.add(2, client_config(1));
  auto before = client.rt->request(kService, kInstance, kMethod, {}, {});
  ASSERT_FALSE(before.ok());
  EXPECT_EQ(before.error(), RuntimeError::kNotRunning);
  b.start_all();
  auto unknown = client.rt->request(0x9999, 1, kMethod, {}, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(), RuntimeError::kNotConfigured);
  auto unavailable = client.rt->request(kService, kInstance, kMethod, {}, {});
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.error(), RuntimeError::kNotAvailable);
  auto ff = client.rt->fire_and_forget(kService, kInstance, kFireAndForget, {});
  ASSERT_FALSE(ff.ok());
  EXPECT_EQ(ff.error(), RuntimeError::kNotAvailable);
  auto st = client.rt->notify(kService, kInstance, kEvent, {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), RuntimeError::kNotConfigured);
}

TEST(RuntimeTest, FireAndForgetIsServedWithoutReply) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(7));
  std::vector<std::uint8_t> got;
  bool flag = false;
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kFireAndForget, [&](const Request& r, Reply&) {
    flag = r.fire_and_forget;
    got.assign(r.payload.begin(), r.payload.end());
  }).ok());
  b.start_all();
  b.run(Duration::milliseconds(500));
  const auto payload = bytes({9, 8, 7});
  ASSERT_TRUE(client.rt->fire_and_forget(kService, kInstance, kFireAndForget, payload).ok());
  const auto datagrams_before = client.rt->counters().datagrams_received;
  b.run(Duration::milliseconds(10));
  EXPECT_TRUE(flag);
  EXPECT_EQ(got, payload);
  EXPECT_EQ(server.rt->counters().requests_served, 1U);
  EXPECT_EQ(client.rt->counters().datagrams_received, datagrams_before);  // nothing came back
}

TEST(RuntimeTest, ErrorPolicyAndHandlerErrors) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(7));
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [&](const Request&, Reply& reply) {
    reply.code = ReturnCode::kNotReady;
  }).ok());
  b.start_all();
  b.run(Duration::milliseconds(500));
  std::vector<ReturnCode> codes;
  auto record = [&](const ResponseResult& r) { codes.push_back(r.code); };
  ASSERT_TRUE(client.rt->request(kService, kInstance, 0x0777, {}, record).ok());       // unknown method
  ASSERT_TRUE(client.rt->request(kService, kInstance, kFireAndForget, {}, record).ok());  // REQUEST to F&F
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, record).ok());       // handler error
  b.run(Duration::milliseconds(20));
  ASSERT_EQ(codes.size(), 3U);
  EXPECT_EQ(codes[0], ReturnCode::kUnknownMethod);
  EXPECT_EQ(codes[1], ReturnCode::kWrongMessageType);
  EXPECT_EQ(codes[2], ReturnCode::kNotReady);
  EXPECT_EQ(server.rt->counters().rx.sent(ReturnCode::kUnknownMethod), 1U);
  EXPECT_EQ(server.rt->counters().rx.sent(ReturnCode::kWrongMessageType), 1U);
}

TEST(RuntimeTest, RequestTimesOutWhenResponsesAreLost) {
  Bench b;
  Node& server = b.add(1, server_config());
  RuntimeConfig cc = client_config(7);
  cc.request_timeout = Duration::milliseconds(200);
  Node& client = b.add(2, cc);
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [](const Request&, Reply&) {}).ok());
  b.start_all();
  b.run(Duration::milliseconds(500));
  net::DropEveryNthHook drop(1, net::match_udp_dst_port(cc.client_port));
  b.segment.add_hook(&drop);
  std::vector<ReturnCode> codes;
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) {
    codes.push_back(r.code);
  }).ok());
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) {
    codes.push_back(r.code);
  }, Duration::milliseconds(50)).ok());
  b.run(Duration::milliseconds(100));
  EXPECT_EQ(codes, std::vector<ReturnCode>{ReturnCode::kTimeout});  // the 50 ms one
  b.run(Duration::milliseconds(150));
  EXPECT_EQ(codes, (std::vector<ReturnCode>{ReturnCode::kTimeout, ReturnCode::kTimeout}));
  EXPECT_EQ(client.rt->counters().request_timeouts, 2U);
  EXPECT_EQ(server.rt->counters().requests_served, 2U);
  b.segment.remove_hook(&drop);
}

TEST(RuntimeTest, TooManyPendingRequests) {
  Bench b;
  Node& server = b.add(1, server_config());
  RuntimeConfig cc = client_config(7);
  cc.max_pending_requests = 2;
  Node& client = b.add(2, cc);
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [](const Request&, Reply&) {}).ok());
  b.start_all();
  b.run(Duration::milliseconds(500));
  int done = 0;
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult&) { ++done; }).ok());
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult&) { ++done; }).ok());
  auto third = client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult&) { ++done; });
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error(), RuntimeError::kTooManyPending);
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(done, 2);
  EXPECT_EQ(client.rt->pending_requests(), 0U);
  // Many answered requests: the slots and the timeout heap are reused.
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) {
      EXPECT_EQ(r.code, ReturnCode::kOk);
      ++done;
    }).ok());
    b.run(Duration::milliseconds(1));
  }
  EXPECT_EQ(done, 52);
  EXPECT_EQ(client.rt->pending_requests(), 0U);
  EXPECT_EQ(client.rt->counters().request_timeouts, 0U);
}

TEST(RuntimeTest, EventsGoToEachSubscriberByUnicast) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& c1 = b.add(2, client_config(2));
  Node& c2 = b.add(3, client_config(3));
  std::vector<std::vector<std::uint8_t>> got1, got2;
  bool any_multicast = false;
  c1.rt->on_event(kService, kEvent, [&](const Notification& n) {
    any_multicast = any_multicast || n.multicast;
    got1.emplace_back(n.payload.begin(), n.payload.end());
  });
  c2.rt->on_event(kService, kEvent, [&](const Notification& n) {
    any_multicast = any_multicast || n.multicast;
    got2.emplace_back(n.payload.begin(), n.payload.end());
  });
  b.start_all();
  b.run(Duration::milliseconds(500));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 2U);
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, bytes({0xAB})).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(got1, std::vector<std::vector<std::uint8_t>>{bytes({0xAB})});
  EXPECT_EQ(got2, std::vector<std::vector<std::uint8_t>>{bytes({0xAB})});
  EXPECT_FALSE(any_multicast);
  EXPECT_EQ(server.rt->counters().notifications_sent, 2U);  // one datagram per subscriber
}

TEST(RuntimeTest, AnyEventHandlerTakesEventsWithoutTheirOwnHandler) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  std::vector<std::uint16_t> any_ids;
  int own = 0;
  client.rt->on_event(kService, Runtime::kAnyEvent, [&](const Notification& n) { any_ids.push_back(n.event_id); });
  client.rt->on_event(kService, kField, [&](const Notification&) { ++own; });
  b.start_all();
  b.run(Duration::milliseconds(500));
  const int own_after_start = own;  // the field's initial value went to its own handler
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, bytes({1})).ok());
  ASSERT_TRUE(server.rt->set_field(kService, kInstance, kField, bytes({2})).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(any_ids, std::vector<std::uint16_t>{kEvent});
  EXPECT_EQ(own, own_after_start + 1);
}

TEST(RuntimeTest, MulticastAtThreshold) {
  Bench b;
  RuntimeConfig sc = server_config();
  sc.services[0].eventgroups[0].multicast = Endpoint{IpAddress::v4(239, 1, 2, 3), 30600, L4Proto::kUdp};
  sc.services[0].eventgroups[0].multicast_threshold = 2;
  Node& server = b.add(1, sc);
  Node& c1 = b.add(2, client_config(2));
  int unicast1 = 0, multicast1 = 0, multicast2 = 0;
  c1.rt->on_event(kService, kEvent, [&](const Notification& n) { ++(n.multicast ? multicast1 : unicast1); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, bytes({1})).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(unicast1, 1);  // below the threshold: unicast
  EXPECT_EQ(multicast1, 0);

  Node& c2 = b.add(3, client_config(3));
  c2.rt->on_event(kService, kEvent, [&](const Notification& n) {
    EXPECT_TRUE(n.multicast);
    ++multicast2;
  });
  ASSERT_TRUE(c2.rt->start().ok());
  b.run(Duration::milliseconds(2500));  // c1 re-subscribes with the next cyclic offer too
  ASSERT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 2U);
  const auto sent_before = server.rt->counters().notifications_sent;
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, bytes({2})).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(server.rt->counters().notifications_sent, sent_before + 1);  // one datagram to the group
  EXPECT_EQ(multicast1, 1);
  EXPECT_EQ(multicast2, 1);
  EXPECT_EQ(unicast1, 1);
}

TEST(RuntimeTest, FieldsInitialValueGetterAndSetter) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  ASSERT_TRUE(server.rt->set_field(kService, kInstance, kField, bytes({5, 5})).ok());  // before start
  std::vector<std::vector<std::uint8_t>> values;
  client.rt->on_event(kService, kField, [&](const Notification& n) { values.emplace_back(n.payload.begin(), n.payload.end()); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_GE(values.size(), 1U);  // initial value to the new subscriber
  EXPECT_EQ(values[0], bytes({5, 5}));
  values.clear();

  std::vector<std::uint8_t> got;
  ASSERT_TRUE(client.rt->request(kService, kInstance, kFieldGetter, {}, [&](const ResponseResult& r) {
    got.assign(r.payload.begin(), r.payload.end());
  }).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(got, bytes({5, 5}));
  ASSERT_TRUE(client.rt->request(kService, kInstance, kFieldSetter, bytes({7}), [&](const ResponseResult& r) {
    got.assign(r.payload.begin(), r.payload.end());
  }).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(got, bytes({7}));
  ASSERT_EQ(values.size(), 1U);  // the setter notified
  EXPECT_EQ(values[0], bytes({7}));
  ASSERT_TRUE(server.rt->set_field(kService, kInstance, kField, bytes({8})).ok());
  b.run(Duration::milliseconds(10));
  ASSERT_EQ(values.size(), 2U);
  EXPECT_EQ(values[1], bytes({8}));
  EXPECT_FALSE(server.rt->set_field(kService, kInstance, kEvent, bytes({1})).ok());  // not a field
}

TEST(RuntimeTest, LargePayloadsUseTp) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  std::vector<std::uint8_t> big(5000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 13);
  std::size_t request_size = 0;
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [&](const Request& r, Reply& reply) {
    request_size = r.payload.size();
    reply.payload.assign(r.payload.rbegin(), r.payload.rend());
  }).ok());
  std::vector<std::uint8_t> event_got;
  client.rt->on_event(kService, kEvent, [&](const Notification& n) { event_got.assign(n.payload.begin(), n.payload.end()); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  std::vector<std::uint8_t> answer;
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, big, [&](const ResponseResult& r) {
    answer.assign(r.payload.begin(), r.payload.end());
  }).ok());
  b.run(Duration::milliseconds(20));
  EXPECT_EQ(request_size, big.size());
  ASSERT_EQ(answer.size(), big.size());
  EXPECT_TRUE(std::equal(answer.begin(), answer.end(), big.rbegin()));
  EXPECT_EQ(client.rt->counters().tp_segments_sent, 4U);  // 3 x 1392 + 824
  EXPECT_EQ(server.rt->counters().tp_messages_reassembled, 1U);
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, big).ok());
  b.run(Duration::milliseconds(20));
  EXPECT_EQ(event_got, big);

  std::vector<std::uint8_t> too_big(client.rt->config().max_message_size + 1);
  auto r = client.rt->request(kService, kInstance, kMethod, too_big, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), RuntimeError::kTooLarge);
}

TEST(RuntimeTest, StopOfferEndsAvailabilityAndStopCompletesPending) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  std::vector<bool> availability;
  client.rt->on_availability([&](std::uint16_t, std::uint16_t, bool up) { availability.push_back(up); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_TRUE(client.rt->available(kService));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  // Client stop: StopSubscribe reaches the server; the pending request ends.
  std::vector<ReturnCode> codes;
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) {
    codes.push_back(r.code);
  }).ok());
  client.rt->stop();
  client.rt->stop();  // idempotent
  EXPECT_EQ(codes, std::vector<ReturnCode>{ReturnCode::kNotReachable});
  b.run(Duration::milliseconds(20));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 0U);
  ASSERT_TRUE(client.rt->start().ok());
  b.run(Duration::milliseconds(1500));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  // Server stop: StopOffer makes the service unavailable at once.
  server.rt->stop();
  b.run(Duration::milliseconds(20));
  EXPECT_FALSE(client.rt->available(kService));
  ASSERT_GE(availability.size(), 2U);
  EXPECT_FALSE(availability.back());
}

TEST(RuntimeTest, RestartedServerIsFoundAgain) {
  Bench b;
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  int events = 0;
  client.rt->on_event(kService, kEvent, [&](const Notification&) { ++events; });
  std::vector<bool> availability;
  client.rt->on_availability([&](std::uint16_t, std::uint16_t, bool up) { availability.push_back(up); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_TRUE(client.rt->available(kService));
  // Crash: no StopOffer. The node comes back with fresh SD state (reboot
  // flag): the client sees the reboot, reports the loss and the new offer.
  b.restart(server, server_config(), /*graceful=*/false);
  b.run(Duration::milliseconds(2000));
  ASSERT_TRUE(client.rt->available(kService));
  EXPECT_EQ(availability, (std::vector<bool>{true, false, true}));
  EXPECT_GE(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  ASSERT_TRUE(server.rt->notify(kService, kInstance, kEvent, bytes({1})).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(events, 1);
  // A graceful restart: StopOffer, then a new offer: lost, then found again.
  b.restart(server, server_config(), /*graceful=*/true);
  b.run(Duration::milliseconds(2000));
  ASSERT_TRUE(client.rt->available(kService));
  ASSERT_GE(availability.size(), 3U);
  EXPECT_TRUE(availability.back());
  EXPECT_FALSE(availability[availability.size() - 2]);
  bool answered = false;
  ASSERT_TRUE(server.rt->set_method_handler(kService, kInstance, kMethod, [](const Request&, Reply&) {}).ok());
  ASSERT_TRUE(client.rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) {
    answered = r.code == ReturnCode::kOk;
  }).ok());
  b.run(Duration::milliseconds(10));
  EXPECT_TRUE(answered);
}

TEST(RuntimeTest, MalformedInputIsCountedNeverFatal) {
  Bench b;
  Node& server = b.add(1, server_config());
  b.start_all();
  b.run(Duration::milliseconds(50));
  net::SimHost& attacker = b.raw_host(9);
  std::vector<std::vector<std::uint8_t>> replies;
  ASSERT_TRUE(attacker.bind(40000, [&](const net::UdpDatagram& d) { replies.emplace_back(d.payload.begin(), d.payload.end()); }).ok());
  const net::Ipv4Endpoint to{b.ip(1), server_config().services[0].udp_port};
  // Garbage, a request whose Length lies, an unknown service, a notification.
  const std::vector<std::vector<std::uint8_t>> inputs = {
      {0x01, 0x02, 0x03},
      {0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00},
      {0x55, 0x55, 0x00, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00},
      {0x12, 0x34, 0x80, 0x01, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x01, 0x01, 0x02, 0x00},
  };
  for (const auto& in : inputs) ASSERT_TRUE(attacker.send_to(40000, to, in).ok());
  // SD garbage too.
  ASSERT_TRUE(attacker.send_to(40000, net::Ipv4Endpoint{b.ip(1), kSdPort}, inputs[1]).ok());
  b.run(Duration::milliseconds(10));
  const auto& c = server.rt->counters();
  EXPECT_EQ(c.rx.dropped_for(DropReason::kTruncatedHeader), 1U);
  EXPECT_EQ(c.rx.sent(ReturnCode::kMalformedMessage), 1U);
  EXPECT_EQ(c.rx.sent(ReturnCode::kUnknownService), 1U);
  EXPECT_EQ(c.rx.dropped_for(DropReason::kNotARequest), 0U);
  EXPECT_EQ(c.notifications_unsubscribed, 1U);
  // The SD garbage is in the node's SD counters (its Length lies: not SOME/IP).
  EXPECT_EQ(c.sd.not_someip, 1U);
  EXPECT_EQ(c.sd.rejected, 1U);
  ASSERT_EQ(replies.size(), 2U);
  EXPECT_EQ(replies[0][14], 0x81);  // ERROR
  EXPECT_EQ(replies[0][15], 0x09);  // E_MALFORMED_MESSAGE
  EXPECT_EQ(replies[1][15], 0x02);  // E_UNKNOWN_SERVICE
  EXPECT_TRUE(server.rt->running());
}

TEST(RuntimeTest, TpReassemblyIsBoundedAndTimesOut) {
  Bench b;
  RuntimeConfig sc = server_config();
  sc.max_message_size = 4096;
  sc.tp_reassembly_timeout = Duration::milliseconds(300);
  Node& server = b.add(1, sc);
  b.start_all();
  b.run(Duration::milliseconds(50));
  net::SimHost& attacker = b.raw_host(9);
  ASSERT_TRUE(attacker.bind(40000, [](const net::UdpDatagram&) {}).ok());
  // First segments (more-segments set) of 20 different requests: never completed.
  for (std::uint8_t i = 0; i < 20; ++i) {
    std::vector<std::uint8_t> seg = {0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x00, 0, 0x00, i, 0x00, 0x01,
                                     0x01, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00, 0x01};
    seg.resize(seg.size() + 1392, 0x5A);
    seg[7] = static_cast<std::uint8_t>((8 + 4 + 1392) & 0xFF);
    seg[6] = static_cast<std::uint8_t>((8 + 4 + 1392) >> 8);
    ASSERT_TRUE(attacker.send_to(40000, net::Ipv4Endpoint{b.ip(1), kServicePort}, seg).ok());
  }
  b.run(Duration::milliseconds(10));
  EXPECT_GT(server.rt->tp_buffered_bytes(), 0U);
  EXPECT_LE(server.rt->tp_buffered_bytes(), 8 * (16 + 4096 + 128));
  EXPECT_EQ(server.rt->counters().tp_rejected, 12U);  // no free slot for 12 of them
  EXPECT_EQ(server.rt->counters().tp_rejected_by[static_cast<std::size_t>(TpError::kTooManyReassemblies)], 12U);
  b.run(Duration::milliseconds(400));
  EXPECT_EQ(server.rt->tp_buffered_bytes(), 0U);  // timed out and freed
  EXPECT_EQ(server.rt->counters().tp.timed_out, 8U);
  EXPECT_EQ(server.rt->counters().requests_served, 0U);
}

TEST(RuntimeTest, OfferTtlExpiryThenFoundAgain) {
  Bench b;
  RuntimeConfig sc = server_config();
  sc.sd_timing.ttl = 3;  // seconds
  sc.sd_timing.cyclic_offer_delay = Duration::milliseconds(1000);
  Node& server = b.add(1, sc);
  Node& client = b.add(2, client_config(2));
  std::vector<bool> availability;
  client.rt->on_availability([&](std::uint16_t, std::uint16_t, bool up) { availability.push_back(up); });
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_TRUE(client.rt->available(kService));
  // Partition: nothing from the server reaches anybody for 5 s.
  net::DropEveryNthHook cut(1, net::match_ingress(server.port));
  b.segment.add_hook(&cut);
  b.run(Duration::milliseconds(5000));
  EXPECT_FALSE(client.rt->available(kService));  // the offer's TTL ran out
  b.segment.remove_hook(&cut);
  b.run(Duration::milliseconds(2000));
  EXPECT_TRUE(client.rt->available(kService));
  EXPECT_EQ(availability, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
}

TEST(RuntimeTest, ConfigurationErrorsNameTheItem) {
  net::Simulator sim;
  net::SimHost host(sim, net::SimHostConfig{net::MacAddress::local(1), net::Ipv4Address::from_octets(10, 0, 0, 1)});
  SimTransport tr(sim, host);
  SeededRandom rnd(1);
  auto expect_throw = [&](RuntimeConfig c, const std::string& needle) {
    try {
      Runtime rt(std::move(c), tr, rnd);
      ADD_FAILURE() << "no exception for " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  RuntimeConfig dup = server_config();
  dup.services.push_back(dup.services[0]);
  expect_throw(dup, "offered twice");
  RuntimeConfig bad_group = server_config();
  bad_group.services[0].events[0].eventgroups = {0x0999};
  expect_throw(bad_group, "unknown eventgroup 0x0999");
  RuntimeConfig bad_event = server_config();
  bad_event.services[0].events[0].event_id = 0x0001;
  expect_throw(bad_event, "not an event id");
  RuntimeConfig no_port = server_config();
  no_port.services[0].udp_port = 0;
  expect_throw(no_port, "udp_port missing");
  RuntimeConfig dup_client = client_config(1);
  dup_client.clients.push_back(dup_client.clients[0]);
  expect_throw(dup_client, "required twice");
}

TEST(RuntimeTest, PortClashIsATransportError) {
  Bench b;
  Node& server = b.add(1, server_config());
  ASSERT_TRUE(server.rt->start().ok());
  // A second runtime on the same transport cannot take the same ports.
  SeededRandom rnd(5);
  Runtime second(server_config(), *server.tr, rnd);
  auto st = second.start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), RuntimeError::kTransport);
  EXPECT_FALSE(second.running());
  EXPECT_TRUE(server.rt->running());
}

}  // namespace
}  // namespace layersec::someip
