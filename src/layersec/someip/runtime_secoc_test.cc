// The runtime's SecOC binding on the simulated segment: protected request /
// response and events, an attacker on the switch (tamper, replay, inject
// unprotected), freshness sync as SOME/IP notifications (also across a
// receiver restart), multicast verified by two subscribers, protected SD.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim_attack.h"
#include "layersec/secoc/engine.h"
#include "layersec/secoc/simulation.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/counters_json.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/runtime_test_support.h"
#include "layersec/someip/runtime_secoc_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;  // NOLINT

TEST(RuntimeSecocTest, ProtectedRequestResponseAndEvents) {
  SecuredPair p;
  ASSERT_TRUE(p.client->rt->available(kService));
  EXPECT_GE(p.client->rt->counters().secoc_syncs_accepted, 1U);  // initial sync to the new subscriber
  std::vector<std::uint8_t> answer;
  ASSERT_TRUE(p.client->rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{1, 2, 3},
                                    [&](const ResponseResult& r) {
                                      EXPECT_EQ(r.code, ReturnCode::kOk);
                                      answer.assign(r.payload.begin(), r.payload.end());
                                    }).ok());
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(answer, (std::vector<std::uint8_t>{3, 2, 1}));
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{0x42}).ok());
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.events, std::vector<std::vector<std::uint8_t>>{{0x42}});
  // Periodic syncs (new reset cycles) keep the client in step.
  for (int i = 0; i < 3; ++i) {
    p.b.run(Duration::milliseconds(1100));
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{7}).ok());
  }
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.events.size(), 4U);
  EXPECT_GE(p.client->rt->counters().secoc_syncs_accepted, 4U);
  EXPECT_TRUE(p.client_rejections.empty());
  EXPECT_TRUE(p.server_rejections.empty());
  EXPECT_EQ(p.server->rt->counters().secoc_verified, 1U);  // the request
  EXPECT_GE(p.server->rt->counters().secoc_protected, 5U);
  EXPECT_EQ(p.client->rt->counters().secoc_verified, 5U);  // response + 4 events
}

TEST(RuntimeSecocTest, LargeProtectedEventTravelsAsTp) {
  SecuredPair p;
  std::vector<std::uint8_t> big(4000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i);
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, big).ok());
  p.b.run(Duration::milliseconds(10));
  ASSERT_EQ(p.events.size(), 1U);
  EXPECT_EQ(p.events[0], big);  // protected, segmented, reassembled, verified
  EXPECT_EQ(p.server->rt->counters().tp_segments_sent, 3U);
  EXPECT_EQ(p.client->rt->counters().tp_messages_reassembled, 1U);
  EXPECT_TRUE(p.client_rejections.empty());
}

TEST(RuntimeSecocTest, TamperedEventIsRejectedNotDelivered) {
  SecuredPair p;
  net::BitFlipHook::Options o;
  o.min_offset = 14 + 20 + 8 + 16;  // SOME/IP payload (the Secured I-PDU) only
  o.refresh = true;                 // valid checksums: only SecOC can notice
  net::BitFlipHook flip(o, 99, net::match_udp_dst_port(kClientPort));
  p.b.segment.add_hook(&flip);
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{1, 2, 3, 4}).ok());
  p.b.run(Duration::milliseconds(10));
  p.b.segment.remove_hook(&flip);
  EXPECT_EQ(flip.modified(), 1U);
  EXPECT_TRUE(p.events.empty());
  EXPECT_EQ(p.client->rt->counters().secoc_rejected, 1U);
  ASSERT_EQ(p.client_rejections.size(), 1U);
  EXPECT_EQ(p.client_rejections[0].method_or_event, kEvent);
  EXPECT_NE(p.client_rejections[0].reason, secoc::Rejection::kUnknownPdu);
  // The next genuine event still passes.
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{5}).ok());
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.events, std::vector<std::vector<std::uint8_t>>{{5}});
}

TEST(RuntimeSecocTest, ReplayedFrameIsRejected) {
  SecuredPair p;
  net::ReplayHook replay(net::match_udp_dst_port(kClientPort));
  p.b.segment.add_hook(&replay);
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{1}).ok());
  p.b.run(Duration::milliseconds(10));
  p.b.segment.remove_hook(&replay);
  ASSERT_EQ(replay.recorded(), 1U);
  ASSERT_EQ(p.events.size(), 1U);
  replay.replay_recorded(p.b.segment);
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.events.size(), 1U);  // not delivered again
  ASSERT_EQ(p.client_rejections.size(), 1U);
  EXPECT_EQ(p.client_rejections[0].reason, secoc::Rejection::kReplay);
}

TEST(RuntimeSecocTest, UnprotectedInjectionOnBoundIdsIsRejected) {
  SecuredPair p;
  // A plain notification of the bound event, source spoofed as the server.
  const std::vector<std::uint8_t> notification = {0x12, 0x34, 0x80, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
                                                  0x00, 0x07, 0x01, 0x01, 0x02, 0x00, 0xAA};
  p.b.segment.inject(p.server->port, spoofed_frame(1, kServicePort, 2, kClientPort, notification));
  // A plain request of the bound method, source spoofed as the client.
  const std::vector<std::uint8_t> request = {0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x02,
                                             0x00, 0x99, 0x01, 0x01, 0x00, 0x00, 0xBB};
  int served = 0;
  ASSERT_TRUE(p.server->rt->set_method_handler(kService, kInstance, kMethod, [&](const Request&, Reply&) { ++served; }).ok());
  p.b.segment.inject(p.client->port, spoofed_frame(2, kClientPort, 1, kServicePort, request));
  p.b.run(Duration::milliseconds(10));
  EXPECT_TRUE(p.events.empty());
  EXPECT_EQ(served, 0);
  ASSERT_EQ(p.client_rejections.size(), 1U);
  EXPECT_TRUE(p.client_rejections[0].unprotected);
  ASSERT_EQ(p.server_rejections.size(), 1U);
  EXPECT_TRUE(p.server_rejections[0].unprotected);
  EXPECT_EQ(p.server_rejections[0].method_or_event, kMethod);
  EXPECT_EQ(p.server->rt->counters().secoc_rejected, 1U);
  EXPECT_EQ(p.server->rt->counters().requests_served, 0U);
}

TEST(RuntimeSecocTest, ForgedResponseDoesNotEndTheRequest) {
  SecuredPair p;
  net::DropEveryNthHook drop(1, net::match_udp_dst_port(kClientPort));
  p.b.segment.add_hook(&drop);
  std::vector<ReturnCode> codes;
  auto session = p.client->rt->request(kService, kInstance, kMethod, {}, [&](const ResponseResult& r) { codes.push_back(r.code); },
                                       Duration::milliseconds(100));
  ASSERT_TRUE(session.ok());
  p.b.run(Duration::milliseconds(5));
  p.b.segment.remove_hook(&drop);
  std::vector<std::uint8_t> response = {0x12, 0x34, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x02,
                                        0x00, 0x00, 0x01, 0x01, 0x80, 0x00, 0xCC};
  response[11] = static_cast<std::uint8_t>(*session);
  p.b.segment.inject(p.server->port, spoofed_frame(1, kServicePort, 2, kClientPort, response));
  p.b.run(Duration::milliseconds(10));
  EXPECT_TRUE(codes.empty());
  EXPECT_EQ(p.client->rt->counters().secoc_rejected, 1U);
  p.b.run(Duration::milliseconds(100));
  EXPECT_EQ(codes, std::vector<ReturnCode>{ReturnCode::kTimeout});
}

TEST(RuntimeSecocTest, SyncWorksAcrossReceiverRestart) {
  SecuredPair p;
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{1}).ok());
  p.b.run(Duration::milliseconds(2500));  // two more reset cycles
  ASSERT_EQ(p.events.size(), 1U);
  // The client node crashes and comes back with a fresh engine (its store
  // kept, as a real ECU's would be) and fresh SD state.
  p.b.restart(*p.client, secured_client_config(2), /*graceful=*/false, [&](Runtime& rt) {
    p.client_sec.start(client_engine_config(), p.b.sim.now());  // the old runtime is gone
    rt.attach_secoc(*p.client_sec.engine, client_bindings());
    rt.on_event(kService, kEvent, [&](const Notification& n) { p.events.emplace_back(n.payload.begin(), n.payload.end()); });
    rt.on_rejection([&](const SecurityRejection& r) { p.client_rejections.push_back(r); });
  });
  p.b.run(Duration::milliseconds(500));
  ASSERT_TRUE(p.client->rt->available(kService));
  EXPECT_GE(p.client->rt->counters().secoc_syncs_accepted, 1U);  // the latest sync, sent on subscription
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{2}).ok());
  p.b.run(Duration::milliseconds(10));
  ASSERT_EQ(p.events.size(), 2U);
  EXPECT_EQ(p.events[1], std::vector<std::uint8_t>{2});
  EXPECT_TRUE(p.client_rejections.empty());
}

TEST(RuntimeSecocTest, MulticastVerifiedByTwoSubscribers) {
  RuntimeConfig sc = secured_server_config();
  sc.services[0].eventgroups[0].multicast = Endpoint{IpAddress::v4(239, 9, 9, 9), 30700, L4Proto::kUdp};
  sc.services[0].eventgroups[0].multicast_threshold = 2;
  SecuredPair p(sc);
  p.extra_sec.start(client_engine_config(), p.b.sim.now());
  Node& c2 = p.b.add(3, secured_client_config(3));
  c2.rt->attach_secoc(*p.extra_sec.engine, client_bindings());
  std::vector<bool> got2;
  c2.rt->on_event(kService, kEvent, [&](const Notification& n) { got2.push_back(n.multicast); });
  ASSERT_TRUE(c2.rt->start().ok());
  p.b.run(Duration::milliseconds(500));
  ASSERT_EQ(p.server->rt->subscriber_count(kService, kInstance, kEventgroup), 2U);
  const auto sent = p.server->rt->counters().notifications_sent;
  ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{0x33}).ok());
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.server->rt->counters().notifications_sent, sent + 1);
  EXPECT_EQ(p.events, std::vector<std::vector<std::uint8_t>>{{0x33}});
  EXPECT_EQ(got2, std::vector<bool>{true});
  EXPECT_EQ(p.client->rt->counters().secoc_verified, 1U);
  EXPECT_EQ(c2.rt->counters().secoc_verified, 1U);
  for (const auto& r : p.client_rejections)
    ADD_FAILURE() << "client rejected " << (r.sd ? "SD " : "") << std::hex << r.method_or_event << " "
                  << secoc::to_string(r.reason) << " from " << r.source.to_string();
}

TEST(RuntimeSecocTest, ProtectedServiceDiscovery) {
  SecocNode ss, cs;  // must outlive the runtimes
  Bench b;
  ss.start(server_engine_config(Duration::seconds(3600)), b.sim.now());
  cs.start(client_engine_config(), b.sim.now());
  // Timestamp freshness: no provisioning, no sync - SD verifies from the
  // first Offer (before, a freshness profile on SD deadlocked discovery).
  Node& server = b.add(1, server_config());
  Node& client = b.add(2, client_config(2));
  SecocBindings sb;
  sb.sd_tx_pdu = kTxSd;
  sb.sd_rx_pdu = kRxClientSd;
  SecocBindings cb;
  cb.sd_tx_pdu = kTxSd;
  cb.sd_rx_pdu = kRxServerSd;
  server.rt->attach_secoc(*ss.engine, sb);
  client.rt->attach_secoc(*cs.engine, cb);
  std::vector<SecurityRejection> rejected;
  client.rt->on_rejection([&](const SecurityRejection& r) { rejected.push_back(r); });
  net::ReplayHook record(net::match_udp_dst_port(kSdPort));
  b.segment.add_hook(&record);
  b.start_all();
  b.run(Duration::milliseconds(500));
  b.segment.remove_hook(&record);
  ASSERT_TRUE(client.rt->available(kService));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  EXPECT_GE(client.rt->counters().secoc_sd_verified, 2U);  // offer + ack at least
  EXPECT_TRUE(rejected.empty());
  // A plain SD message (a StopOffer that would end the service) is refused.
  const std::vector<std::uint8_t> stop_offer = {
      0xFF, 0xFF, 0x81, 0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x00, 0x00, 0x09, 0x01, 0x01, 0x02, 0x00,
      0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  b.segment.inject(server.port, spoofed_frame(1, kSdPort, 2, kSdPort, stop_offer));
  b.run(Duration::milliseconds(10));
  EXPECT_TRUE(client.rt->available(kService));
  ASSERT_EQ(rejected.size(), 1U);
  EXPECT_TRUE(rejected[0].sd);
  // Every protected SD message recorded earlier, replayed: none is accepted.
  ASSERT_GE(record.recorded(), 2U);
  rejected.clear();
  const auto verified = client.rt->counters().secoc_sd_verified;
  record.replay_recorded(b.segment);
  b.run(Duration::milliseconds(10));
  EXPECT_EQ(client.rt->counters().secoc_sd_verified, verified);
  EXPECT_FALSE(rejected.empty());
  for (const auto& r : rejected) EXPECT_TRUE(r.sd);
  EXPECT_TRUE(client.rt->available(kService));
}

TEST(RuntimeSecocTest, SecocBindingsWithoutSdProtectionAreRefusedUnlessExplicit) {
  SecocNode s;
  Bench b;
  s.start(client_engine_config(), b.sim.now());
  Node& n = b.add(2, client_config(2));
  SecocBindings plain_sd = client_bindings();
  plain_sd.sd_tx_pdu.reset();
  plain_sd.sd_rx_pdu.reset();
  EXPECT_THROW(n.rt->attach_secoc(*s.engine, plain_sd), std::invalid_argument);
  // SD on a counter-freshness PDU would deadlock discovery: refused.
  SecocBindings counter_sd = client_bindings();
  counter_sd.sd_rx_pdu = kRxResponse;
  EXPECT_THROW(n.rt->attach_secoc(*s.engine, counter_sd), std::invalid_argument);
  plain_sd.sd_unprotected = true;  // the explicit setting
  EXPECT_NO_THROW(n.rt->attach_secoc(*s.engine, plain_sd));
}

TEST(RuntimeSecocTest, BindingToUnknownPduThrows) {
  SecocNode s;
  Bench b;
  s.start(client_engine_config(), b.sim.now());
  Node& n = b.add(2, client_config(2));
  SecocBindings bad;
  bad.messages = {SecocBinding{kService, kInstance, kMethod, 77, std::nullopt}};
  EXPECT_THROW(n.rt->attach_secoc(*s.engine, bad), std::invalid_argument);
  SecocBindings bad_sd;
  bad_sd.sd_rx_pdu = 55;
  EXPECT_THROW(n.rt->attach_secoc(*s.engine, bad_sd), std::invalid_argument);
}

}  // namespace
}  // namespace layersec::someip

namespace layersec::someip {
namespace {

// RuntimeConfig::cost_clock: protect/verify time is accumulated at the call
// sites when a cost clock is given, and not at all otherwise (and printed by
// to_json).
TEST(RuntimeSecocTest, CallSiteTimingOnlyWhenAsked) {
  const MonotonicClock cost_clock;
  for (bool timed : {false, true}) {
    RuntimeConfig sc = secured_server_config();
    sc.cost_clock = timed ? &cost_clock : nullptr;
    SecuredPair p(std::move(sc));
    ASSERT_TRUE(p.client->rt->available(kService));
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{0x42}).ok());
    p.b.run(Duration::milliseconds(10));
    ASSERT_EQ(p.events.size(), 1U);
    const RuntimeCounters& c = p.server->rt->counters();
    EXPECT_GE(c.secoc_protected, 1U);
    if (timed) {
      EXPECT_GT(c.secoc_protect_ns, 0U);
    } else {
      EXPECT_EQ(c.secoc_protect_ns, 0U);
    }
    EXPECT_EQ(c.secoc_verify_ns, 0U);  // the server verified nothing yet
    EXPECT_EQ(p.client->rt->counters().secoc_verify_ns, 0U);  // the client's config is untimed
    const nlohmann::json j = to_json(c);
    EXPECT_EQ(j.at("secoc_protect_ns").get<std::uint64_t>(), c.secoc_protect_ns);
    EXPECT_EQ(j.at("secoc_protected").get<std::uint64_t>(), c.secoc_protected);
    EXPECT_TRUE(j.at("rx_dropped").is_object());
  }
}

}  // namespace
}  // namespace layersec::someip
