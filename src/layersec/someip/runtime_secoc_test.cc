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

namespace layersec::someip {
namespace {

using namespace testing_support;  // NOLINT

constexpr std::uint16_t kSyncService = 0x5EC0;
constexpr std::uint16_t kSyncEvent = 0x8100;
constexpr std::uint16_t kSyncGroup = 0x0100;
constexpr std::uint16_t kSyncPort = 30510;

// PDU ids. Server: tx 0 response, 1 event, 2 SD; rx 0 request, 1 client SD.
// Client: tx 0 request, 2 SD; rx 0 response, 1 event, 2 server SD.
constexpr std::uint32_t kTxResponse = 0, kTxEvent = 1, kTxSd = 2;
constexpr std::uint32_t kRxRequest = 0, kRxClientSd = 1;
constexpr std::uint32_t kTxRequest = 0;
constexpr std::uint32_t kRxResponse = 0, kRxEvent = 1, kRxServerSd = 2;

secoc::PduProfile profile() { return secoc::PduProfile::vendor(); }

secoc::TxPduConfig tx(std::uint32_t id, std::uint16_t data_id) {
  secoc::TxPduConfig t;
  t.id = id;
  t.data_id = data_id;
  t.profile = profile();
  t.key_group = 0;
  return t;
}

secoc::RxPduConfig rx(std::uint32_t id, std::uint16_t data_id, std::uint16_t sender) {
  secoc::RxPduConfig r;
  r.id = id;
  r.data_id = data_id;
  r.profile = profile();
  r.key_group = 0;
  r.window = 32;
  r.sender_id = sender;
  r.has_sync_channel = true;
  r.sync_channel = 0;
  return r;
}

secoc::EngineConfig server_engine_config(Duration sync_period) {
  secoc::EngineConfig c;
  c.sender_id = 1;
  c.key_groups = {{"pdu", profile().algorithm}, {"sync", secoc::AuthAlgorithm::kCmacAes128}};
  c.sync_tx.enabled = true;
  c.sync_tx.data_id = 0xFF01;
  c.sync_tx.key_group = 1;
  c.sync_tx.period = sync_period;
  c.tx_pdus = {tx(kTxResponse, 0x0100), tx(kTxEvent, 0x0101), tx(kTxSd, 0x0102)};
  // The client sends no sync messages: this channel stays silent and the
  // receive state is provisioned with set_rx_freshness().
  c.sync_rx = {{0, 0xFF02, 1, 64}};
  c.rx_pdus = {rx(kRxRequest, 0x0200, 2), rx(kRxClientSd, 0x0202, 2)};
  return c;
}

secoc::EngineConfig client_engine_config() {
  secoc::EngineConfig c;
  c.sender_id = 2;
  c.key_groups = {{"pdu", profile().algorithm}, {"sync", secoc::AuthAlgorithm::kCmacAes128}};
  c.sync_rx = {{0, 0xFF01, 1, 64}};
  c.tx_pdus = {tx(kTxRequest, 0x0200), tx(kTxSd, 0x0202)};
  c.rx_pdus = {rx(kRxResponse, 0x0100, 1), rx(kRxEvent, 0x0101, 1), rx(kRxServerSd, 0x0102, 1)};
  return c;
}

struct SecocNode {
  secoc::MemoryStateStore store;
  std::unique_ptr<secoc::Engine> engine;
  // (Re)starts the engine from the store and installs the test keys.
  void start(const secoc::EngineConfig& c, TimePoint now) {
    engine.reset();
    auto e = secoc::Engine::start(c, store);
    if (!e.ok()) throw std::runtime_error("engine start failed");
    engine = std::move(e).value();
    if (!engine->install_key(0, 1, secoc::test_key(profile().algorithm, 1), now).ok() ||
        !engine->install_key(1, 1, secoc::test_key(secoc::AuthAlgorithm::kCmacAes128, 1), now).ok())
      throw std::runtime_error("key installation failed");
  }
};

RuntimeConfig secured_server_config() {
  RuntimeConfig c = server_config();
  ServiceConfig s;
  s.service_id = kSyncService;
  s.instance_id = 1;
  s.udp_port = kSyncPort;
  s.events = {EventConfig{kSyncEvent, {kSyncGroup}, false, std::nullopt, std::nullopt}};
  s.eventgroups = {EventgroupConfig{kSyncGroup, std::nullopt, 1}};
  c.services.push_back(s);
  return c;
}

RuntimeConfig secured_client_config(std::uint16_t client_id) {
  RuntimeConfig c = client_config(client_id);
  c.clients.push_back(ClientConfig{kSyncService, 1, 0xFF, 0, {kSyncGroup}});
  return c;
}

SecocBindings sync_bindings() {
  SecocBindings b;
  b.sync_service = kSyncService;
  b.sync_instance = 1;
  b.sync_event = kSyncEvent;
  b.sync_rx_channel = 0;
  return b;
}

SecocBindings server_bindings() {
  SecocBindings b = sync_bindings();
  b.messages = {SecocBinding{kService, kInstance, kMethod, kTxResponse, kRxRequest},
                SecocBinding{kService, kInstance, kEvent, kTxEvent, std::nullopt}};
  return b;
}

SecocBindings client_bindings() {
  SecocBindings b = sync_bindings();
  b.messages = {SecocBinding{kService, 0xFFFF, kMethod, kTxRequest, kRxResponse},
                SecocBinding{kService, 0xFFFF, kEvent, std::nullopt, kRxEvent}};
  return b;
}

// Server node 1 and client node 2 with their engines; the server's receive
// state for the client's requests is provisioned (the client sends no sync).
struct SecuredPair {
  // Engines first: they must outlive the runtimes (destroyed with `b`).
  SecocNode server_sec;
  SecocNode client_sec;
  SecocNode extra_sec;
  Bench b;
  Node* server = nullptr;
  Node* client = nullptr;
  std::vector<SecurityRejection> client_rejections;
  std::vector<SecurityRejection> server_rejections;
  std::vector<std::vector<std::uint8_t>> events;

  explicit SecuredPair(RuntimeConfig sc = secured_server_config()) {
    server_sec.start(server_engine_config(Duration::seconds(1)), b.sim.now());
    client_sec.start(client_engine_config(), b.sim.now());
    EXPECT_TRUE(server_sec.engine->set_rx_freshness(
        kRxRequest, secoc::FreshnessCounters{client_sec.engine->trip(), client_sec.engine->reset(), 0}));
    server = &b.add(1, std::move(sc));
    client = &b.add(2, secured_client_config(2));
    server->rt->attach_secoc(*server_sec.engine, server_bindings());
    client->rt->attach_secoc(*client_sec.engine, client_bindings());
    server->rt->on_rejection([this](const SecurityRejection& r) { server_rejections.push_back(r); });
    client->rt->on_rejection([this](const SecurityRejection& r) { client_rejections.push_back(r); });
    client->rt->on_event(kService, kEvent, [this](const Notification& n) { events.emplace_back(n.payload.begin(), n.payload.end()); });
    EXPECT_TRUE(server->rt->set_method_handler(kService, kInstance, kMethod, [](const Request& r, Reply& reply) {
      reply.payload.assign(r.payload.rbegin(), r.payload.rend());
    }).ok());
    b.start_all();
    b.run(Duration::milliseconds(500));
  }
};

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

// Builds a frame from `src` (spoofed) to `dst` carrying `payload`.
std::vector<std::uint8_t> spoofed_frame(std::uint32_t src_id, std::uint16_t src_port, std::uint32_t dst_id,
                                        std::uint16_t dst_port, const std::vector<std::uint8_t>& payload) {
  net::UdpFrameSpec spec;
  spec.src_mac = net::MacAddress::local(src_id);
  spec.dst_mac = net::MacAddress::local(dst_id);
  spec.src = net::Ipv4Endpoint{Bench::ip(src_id), src_port};
  spec.dst = net::Ipv4Endpoint{Bench::ip(dst_id), dst_port};
  std::vector<std::uint8_t> frame(1600);
  auto n = net::build_udp_frame(spec, payload, frame);
  if (!n.ok()) throw std::runtime_error("frame build failed");
  frame.resize(*n);
  return frame;
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
  EXPECT_TRUE(p.client_rejections.empty());
}

TEST(RuntimeSecocTest, ProtectedServiceDiscovery) {
  SecocNode ss, cs;  // must outlive the runtimes
  Bench b;
  ss.start(server_engine_config(Duration::seconds(3600)), b.sim.now());
  cs.start(client_engine_config(), b.sim.now());
  // SD cannot carry the first sync (it needs SD itself): provisioned here.
  ASSERT_TRUE(ss.engine->set_rx_freshness(kRxClientSd, {cs.engine->trip(), cs.engine->reset(), 0}));
  ASSERT_TRUE(cs.engine->set_rx_freshness(kRxServerSd, {ss.engine->trip(), ss.engine->reset(), 0}));
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
  b.start_all();
  b.run(Duration::milliseconds(500));
  ASSERT_TRUE(client.rt->available(kService));
  EXPECT_EQ(server.rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  EXPECT_GE(client.rt->counters().secoc_verified, 2U);  // offer + ack at least
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

// RuntimeConfig::time_secoc: protect/verify time is accumulated at the call
// sites when asked for, and not at all otherwise (and printed by to_json).
TEST(RuntimeSecocTest, CallSiteTimingOnlyWhenAsked) {
  for (bool timed : {false, true}) {
    RuntimeConfig sc = secured_server_config();
    sc.time_secoc = timed;
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
