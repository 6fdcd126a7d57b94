// Key management over SOME/IP on the simulated segment: a publisher (key
// server + SecOC-protected event) and subscribers (key clients) on one
// net::Segment, each node a net::SimHost + someip::SimTransport +
// someip::Runtime + secoc::Engine. Time is simulated, starting at a Unix time
// inside the certificates' validity.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/keymgmt/key_client.h"
#include "layersec/keymgmt/key_server.h"
#include "layersec/keymgmt/negotiation_service.h"
#include "layersec/net/sim.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/secoc/state_store.h"
#include "layersec/someip/sim_transport.h"

namespace layersec::keymgmt {
namespace {

constexpr std::int64_t kNowS = 1'780'000'000;
constexpr std::uint16_t kAppService = 0x1234;
constexpr std::uint16_t kAppInstance = 1;
constexpr std::uint16_t kAppEvent = 0x8001;
constexpr std::uint16_t kSyncEvent = 0x8002;
constexpr std::uint16_t kAppEventgroup = 1;
constexpr std::uint16_t kAppPort = 30509;
constexpr std::uint16_t kPublisherSenderId = 1;

kex::Identity must(Result<kex::Identity, kex::PkiError> r) {
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

struct Pki {
  kex::Identity ca, publisher, sub_a, sub_b, intruder;
  kex::TrustStore trust;
};

const Pki& pki() {
  static const Pki* p = [] {
    auto* out = new Pki;
    const auto year = kex::Validity::days_from(kNowS, 365);
    out->ca = must(kex::create_ca({"vehicle-ca", kex::CaKind::kVehicle, kex::KeyAlgorithm::kEcdsaP256,
                                   kex::Validity::days_from(kNowS, 3650)}));
    out->publisher = must(kex::issue_certificate(out->ca, {"gateway", {kAppService}, kex::KeyAlgorithm::kEcdsaP256, year}));
    out->sub_a = must(kex::issue_certificate(out->ca, {"ecu-a", {kAppService}, kex::KeyAlgorithm::kEcdsaP256, year}));
    out->sub_b = must(kex::issue_certificate(out->ca, {"ecu-b", {kAppService}, kex::KeyAlgorithm::kEd25519, year}));
    // Valid certificate of the same CA, authorised for another service only.
    out->intruder = must(kex::issue_certificate(out->ca, {"ecu-x", {0x5678}, kex::KeyAlgorithm::kEcdsaP256, year}));
    auto t = kex::TrustStore::create(std::span<const kex::Certificate>(&out->ca.certificate, 1));
    EXPECT_TRUE(t.ok());
    out->trust = std::move(t).value();
    return out;
  }();
  return *p;
}

someip::SdTiming fast_timing() {
  someip::SdTiming t;
  t.initial_delay_min = Duration::milliseconds(0);
  t.initial_delay_max = Duration::milliseconds(20);
  return t;
}

secoc::PduProfile profile() { return secoc::PduProfile::vendor(); }  // CMAC-AES-256, 64-bit tag, FV64(16)

secoc::EngineConfig publisher_engine_config() {
  secoc::EngineConfig c;
  c.sender_id = kPublisherSenderId;
  c.key_groups = {{"eventgroup-1", secoc::AuthAlgorithm::kCmacAes256}};
  c.sync_tx.enabled = true;
  c.sync_tx.data_id = 0xFD00;
  c.sync_tx.key_group = 0;
  c.sync_tx.period = Duration::milliseconds(100);
  secoc::TxPduConfig t;
  t.id = 0;
  t.data_id = 0x0100;
  t.profile = profile();
  t.key_group = 0;
  c.tx_pdus = {t};
  return c;
}

secoc::EngineConfig subscriber_engine_config(std::uint16_t sender_id) {
  secoc::EngineConfig c;
  c.sender_id = sender_id;
  c.key_groups = {{"eventgroup-1", secoc::AuthAlgorithm::kCmacAes256}};
  c.sync_rx = {{0, 0xFD00, 0, 64, Duration::seconds(1), secoc::kDefaultMaxAge}};
  secoc::RxPduConfig r;
  r.id = 0;
  r.data_id = 0x0100;
  r.profile = profile();
  r.key_group = 0;
  r.sync_channel = 0;
  r.has_sync_channel = true;
  r.sender_id = kPublisherSenderId;
  c.rx_pdus = {r};
  return c;
}

const std::vector<GroupBinding> kGroups = {GroupBinding{kAppService, kAppEventgroup, 0}};

struct Node {
  std::unique_ptr<net::SimHost> host;
  std::unique_ptr<someip::SimTransport> transport;
  std::unique_ptr<someip::SeededRandom> random;
  secoc::MemoryStateStore store;
  std::unique_ptr<secoc::Engine> engine;
  std::unique_ptr<someip::Runtime> runtime;
  std::unique_ptr<KeyServer> server;
  std::unique_ptr<KeyClient> client;
  std::vector<std::vector<std::uint8_t>> events;  // app events delivered (verified)
  std::vector<secoc::Rejection> rejections;       // SecOC drops reported by the runtime
};

class KeyMgmtSim : public ::testing::Test {
 protected:
  KeyMgmtSim() : sim_(7, TimePoint::from_ns(kNowS * 1'000'000'000LL)), segment_(sim_), clock_(sim_) {}
  ~KeyMgmtSim() override {
    for (auto& n : nodes_) {
      n->client.reset();
      n->server.reset();
    }
    for (auto& n : nodes_) n->runtime.reset();
    for (auto& n : nodes_) n->transport.reset();
  }

  Node& add_node(std::uint8_t id, someip::RuntimeConfig rc, secoc::EngineConfig ec, someip::SecocBindings b) {
    auto n = std::make_unique<Node>();
    n->host = std::make_unique<net::SimHost>(
        sim_, net::SimHostConfig{net::MacAddress::local(id), net::Ipv4Address::from_octets(10, 0, 0, id)});
    n->host->attach(segment_);
    n->transport = std::make_unique<someip::SimTransport>(sim_, *n->host);
    n->random = std::make_unique<someip::SeededRandom>(id);
    auto e = secoc::Engine::start(std::move(ec), n->store);
    EXPECT_TRUE(e.ok());
    n->engine = std::move(e).value();
    rc.sd_timing = fast_timing();
    n->runtime = std::make_unique<someip::Runtime>(std::move(rc), *n->transport, *n->random);
    n->runtime->attach_secoc(*n->engine, std::move(b));
    Node* self = n.get();
    n->runtime->on_rejection([self](const someip::SecurityRejection& r) { self->rejections.push_back(r.reason); });
    nodes_.push_back(std::move(n));
    return *nodes_.back();
  }

  Node& add_publisher(kex::KemScheme kem = kex::KemScheme::kX25519) {
    someip::RuntimeConfig rc;
    rc.name = "publisher";
    rc.client_id = 0x0100;
    rc.services.push_back(service_config(ids_));
    someip::ServiceConfig app;
    app.service_id = kAppService;
    app.instance_id = kAppInstance;
    app.udp_port = kAppPort;
    someip::EventConfig ev{kAppEvent, {kAppEventgroup}, false, std::nullopt, std::nullopt};
    someip::EventConfig sync{kSyncEvent, {kAppEventgroup}, false, std::nullopt, std::nullopt};
    app.events = {ev, sync};
    someip::EventgroupConfig g;
    g.eventgroup_id = kAppEventgroup;
    app.eventgroups = {g};
    rc.services.push_back(app);
    someip::SecocBindings b;
    b.sd_unprotected = true;  // these tests are about key management, not SD
    b.messages.push_back({kAppService, 0xFFFF, kAppEvent, 0u, std::nullopt});
    b.sync_service = kAppService;
    b.sync_instance = kAppInstance;
    b.sync_event = kSyncEvent;
    Node& n = add_node(1, rc, publisher_engine_config(), b);
    KeyServerConfig kc;
    kc.ids = ids_;
    kc.mode_b.kem = kem;
    kc.allowed_kems = {kem};
    kc.groups = kGroups;
    auto s = KeyServer::create(kc, *n.runtime, *n.engine, pki().publisher, pki().trust, clock_);
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : to_string(s.error()));
    if (s.ok()) n.server = std::move(s).value();
    return n;
  }

  Node& add_subscriber(std::uint8_t id, const kex::Identity& identity,
                       std::vector<kex::KemScheme> kems = {kex::KemScheme::kX25519}) {
    someip::RuntimeConfig rc;
    rc.name = "subscriber";
    rc.client_id = static_cast<std::uint16_t>(0x0200 + id);
    rc.clients.push_back(client_config(ids_));
    someip::ClientConfig app;
    app.service_id = kAppService;
    app.instance_id = kAppInstance;
    app.eventgroups = {kAppEventgroup};
    rc.clients.push_back(app);
    someip::SecocBindings b;
    b.sd_unprotected = true;  // these tests are about key management, not SD
    b.messages.push_back({kAppService, 0xFFFF, kAppEvent, std::nullopt, 0u});
    b.sync_service = kAppService;
    b.sync_instance = kAppInstance;
    b.sync_event = kSyncEvent;
    b.sync_rx_channel = 0;
    Node& n = add_node(id, rc, subscriber_engine_config(id), b);
    Node* self = &n;
    n.runtime->on_event(kAppService, kAppEvent, [self](const someip::Notification& note) {
      self->events.emplace_back(note.payload.begin(), note.payload.end());
    });
    make_client(n, identity, std::move(kems));
    return n;
  }

  void make_client(Node& n, const kex::Identity& identity, std::vector<kex::KemScheme> kems) {
    KeyClientConfig kc;
    kc.ids = ids_;
    kc.kems = std::move(kems);
    kc.groups = kGroups;
    auto c = KeyClient::create(kc, *n.runtime, *n.engine, identity, pki().trust, clock_);
    EXPECT_TRUE(c.ok());
    if (c.ok()) n.client = std::move(c).value();
  }

  void start_all() {
    for (auto& n : nodes_) ASSERT_TRUE(n->runtime->start().ok());
    run(Duration::milliseconds(300));  // SD: offers, subscriptions
  }
  void run(Duration d) { sim_.run_for(d); }

  // Sends `count` protected events and lets them (and the sync messages) arrive.
  void publish(Node& pub, int count, std::uint8_t tag) {
    for (int i = 0; i < count; ++i) {
      const std::uint8_t payload[] = {tag, static_cast<std::uint8_t>(i), 0xAA, 0x55};
      ASSERT_TRUE(pub.runtime->notify(kAppService, kAppInstance, kAppEvent, payload).ok());
      run(Duration::milliseconds(5));
    }
    run(Duration::milliseconds(20));
  }
  static std::size_t events_with_tag(const Node& n, std::uint8_t tag) {
    std::size_t k = 0;
    for (const auto& e : n.events)
      if (e.size() == 4 && e[0] == tag) ++k;
    return k;
  }
  static std::size_t rejections_of(const Node& n, secoc::Rejection r) {
    std::size_t k = 0;
    for (auto x : n.rejections) k += x == r;
    return k;
  }

  ServiceIds ids_;
  net::Simulator sim_;
  net::Segment segment_;
  net::SimClock clock_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

TEST_F(KeyMgmtSim, PublisherAndTwoSubscribersEstablishAGroupKeyAndExchangeProtectedEvents) {
  Node& pub = add_publisher();
  Node& a = add_subscriber(2, pki().sub_a);
  Node& b = add_subscriber(3, pki().sub_b);
  start_all();
  ASSERT_TRUE(a.runtime->available(ids_.service_id));
  // Before any key: events are not delivered (no fallback to unprotected).
  publish(pub, 2, 0x01);
  EXPECT_EQ(events_with_tag(a, 0x01), 0u);

  ASSERT_TRUE(a.client->start().ok());
  run(Duration::milliseconds(50));
  ASSERT_TRUE(b.client->start().ok());
  run(Duration::milliseconds(300));
  // A joined (key 2), B joined (key 3, a rekey A followed through the notice).
  EXPECT_EQ(a.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kKeyed);
  EXPECT_EQ(b.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kKeyed);
  EXPECT_EQ(pub.server->current_key_id(kAppService, kAppEventgroup), 3u);
  EXPECT_EQ(a.client->key_id(kAppService, kAppEventgroup), 3u);
  EXPECT_EQ(b.client->key_id(kAppService, kAppEventgroup), 3u);
  EXPECT_EQ(pub.server->member_count(kAppService, kAppEventgroup), 2u);
  EXPECT_EQ(pub.server->members_on_current_key(kAppService, kAppEventgroup), 2u);  // A re-confirmed key 3
  EXPECT_EQ(pub.server->counters().joins, 2u);
  EXPECT_GE(a.client->counters().notices_accepted, 1u);
  EXPECT_EQ(pub.server->counters().refused_total(), 0u);

  publish(pub, 10, 0x02);
  EXPECT_EQ(events_with_tag(a, 0x02), 10u);
  EXPECT_EQ(events_with_tag(b, 0x02), 10u);
  EXPECT_GE(a.runtime->counters().secoc_verified, 10u);
  EXPECT_GE(pub.runtime->counters().secoc_protected, 10u);
}

TEST_F(KeyMgmtSim, AnEvictedSubscriberIsRekeyedOutAndRefusedAfterwards) {
  Node& pub = add_publisher();
  Node& a = add_subscriber(2, pki().sub_a);
  Node& b = add_subscriber(3, pki().sub_b);
  start_all();
  ASSERT_TRUE(a.client->start().ok());
  ASSERT_TRUE(b.client->start().ok());
  run(Duration::milliseconds(300));
  ASSERT_EQ(a.client->key_id(kAppService, kAppEventgroup), 3u);
  ASSERT_EQ(b.client->key_id(kAppService, kAppEventgroup), 3u);
  publish(pub, 5, 0x10);
  ASSERT_EQ(events_with_tag(b, 0x10), 5u);

  // B turns hostile: it ignores notices from now on and keeps key 3.
  const std::string b_fingerprint = b.client->fingerprint();
  b.client.reset();
  ASSERT_TRUE(pub.server->evict(kAppService, kAppEventgroup, b_fingerprint).ok());
  EXPECT_EQ(pub.server->current_key_id(kAppService, kAppEventgroup), 4u);
  EXPECT_EQ(pub.server->member_count(kAppService, kAppEventgroup), 1u);
  EXPECT_EQ(pub.server->members_on_current_key(kAppService, kAppEventgroup), 0u);  // nobody holds key 4 yet
  run(Duration::milliseconds(300));
  EXPECT_EQ(pub.server->members_on_current_key(kAppService, kAppEventgroup), 1u);  // A, not the evicted B
  EXPECT_EQ(a.client->key_id(kAppService, kAppEventgroup), 4u);
  EXPECT_GE(a.client->counters().keys_retired, 1u);
  // Key 3 is live nowhere but at B.
  EXPECT_FALSE(pub.engine->retire_key(0, 3));
  EXPECT_FALSE(a.engine->retire_key(0, 3));

  // B's copy of key 3 verifies nothing the publisher sends now: the sync
  // messages (MACed under key 4) fail at B's MAC check, and the events are
  // dropped (as replays or MAC failures: B's freshness state is stuck in the
  // reset cycle of the last sync it could verify).
  const std::size_t b_mac_drops = rejections_of(b, secoc::Rejection::kMacMismatch);
  const std::size_t b_drops = b.rejections.size();
  publish(pub, 6, 0x11);
  run(Duration::milliseconds(300));
  EXPECT_EQ(events_with_tag(a, 0x11), 6u);
  EXPECT_EQ(events_with_tag(b, 0x11), 0u);
  EXPECT_GE(b.rejections.size(), b_drops + 6);
  EXPECT_GT(rejections_of(b, secoc::Rejection::kMacMismatch), b_mac_drops);

  // B asks again with its still valid certificate: refused and counted.
  make_client(b, pki().sub_b, {kex::KemScheme::kX25519});
  ASSERT_TRUE(b.client->start().ok());
  run(Duration::milliseconds(200));
  EXPECT_EQ(b.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kFailed);
  EXPECT_EQ(b.client->last_error(kAppService, kAppEventgroup), KeyMgmtError::kRevoked);
  EXPECT_EQ(pub.server->counters().refused_for(KeyMgmtError::kRevoked), 1u);
  EXPECT_EQ(pub.server->current_key_id(kAppService, kAppEventgroup), 4u);  // no rekey for a refusal
}

TEST_F(KeyMgmtSim, ReplayedKeyRequestsAndConfirmationsAreRejected) {
  Node& pub = add_publisher();
  Node& a = add_subscriber(2, pki().sub_a);
  // Every datagram to the key service is replayed verbatim 1 ms later.
  net::ReplayHook replay(net::match_udp_dst_port(ids_.udp_port), Duration::milliseconds(1));
  segment_.add_hook(&replay);
  start_all();
  ASSERT_TRUE(a.client->start().ok());
  run(Duration::milliseconds(300));
  segment_.remove_hook(&replay);
  EXPECT_GE(replay.replayed(), 3u);  // Hello, KeyRequest, KeyConfirm
  EXPECT_EQ(a.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kKeyed);
  const auto& c = pub.server->counters();
  EXPECT_EQ(c.requests_accepted, 1u);
  EXPECT_EQ(c.confirms_accepted, 1u);
  EXPECT_EQ(c.refused_for(KeyMgmtError::kReplay), 2u);  // the replayed KeyRequest and KeyConfirm
  EXPECT_EQ(c.joins, 1u);                               // the replay joined nobody twice

  // The same bytes replayed later by another node (application-level replay).
  std::vector<std::uint8_t> request, confirm;
  a.client->set_observer([&](std::uint8_t kind, ByteSpan m) {
    (kind == 1 ? request : confirm).assign(m.begin(), m.end());
  });
  ASSERT_TRUE(pub.server->rekey(kAppService, kAppEventgroup).ok());  // A runs a new handshake
  run(Duration::milliseconds(200));
  ASSERT_FALSE(request.empty());
  ASSERT_FALSE(confirm.empty());
  EXPECT_EQ(a.client->key_id(kAppService, kAppEventgroup), 3u);
  someip::RuntimeConfig rc;
  rc.client_id = 0x0666;
  rc.clients.push_back(client_config(ids_));
  Node& attacker = add_node(9, rc, subscriber_engine_config(9), {});
  ASSERT_TRUE(attacker.runtime->start().ok());
  run(Duration::milliseconds(300));
  std::vector<someip::ReturnCode> codes;
  for (const auto* msg : {&request, &confirm}) {
    auto sent = attacker.runtime->request(ids_.service_id, ids_.instance_id,
                                          msg == &request ? ids_.key_request_method : ids_.key_confirm_method, *msg,
                                          [&](const someip::ResponseResult& r) { codes.push_back(r.code); });
    ASSERT_TRUE(sent.ok());
  }
  run(Duration::milliseconds(50));
  ASSERT_EQ(codes.size(), 2u);
  EXPECT_EQ(codes[0], static_cast<someip::ReturnCode>(KeyReturnCode::kReplay));
  EXPECT_EQ(codes[1], static_cast<someip::ReturnCode>(KeyReturnCode::kReplay));
  EXPECT_EQ(pub.server->counters().refused_for(KeyMgmtError::kReplay), 4u);
  // Past the timestamp window the request is stale instead.
  run(Duration::seconds(3));
  codes.clear();
  ASSERT_TRUE(attacker.runtime
                  ->request(ids_.service_id, ids_.instance_id, ids_.key_request_method, request,
                            [&](const someip::ResponseResult& r) { codes.push_back(r.code); })
                  .ok());
  run(Duration::milliseconds(50));
  ASSERT_EQ(codes.size(), 1u);
  EXPECT_EQ(codes[0], static_cast<someip::ReturnCode>(KeyReturnCode::kStale));
  EXPECT_EQ(pub.server->member_count(kAppService, kAppEventgroup), 1u);
}

TEST_F(KeyMgmtSim, ASubscriberNotAuthorisedForTheServiceIsRefusedAndCounted) {
  Node& pub = add_publisher();
  Node& a = add_subscriber(2, pki().sub_a);
  Node& x = add_subscriber(4, pki().intruder);
  start_all();
  ASSERT_TRUE(a.client->start().ok());
  run(Duration::milliseconds(200));
  const std::uint32_t key_before = pub.server->current_key_id(kAppService, kAppEventgroup);
  ASSERT_TRUE(x.client->start().ok());
  run(Duration::milliseconds(200));
  EXPECT_EQ(x.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kFailed);
  EXPECT_EQ(x.client->last_error(kAppService, kAppEventgroup), KeyMgmtError::kUnauthorised);
  EXPECT_EQ(x.client->counters().failures_for(KeyMgmtError::kUnauthorised), 1u);
  EXPECT_EQ(pub.server->counters().refused_for(KeyMgmtError::kUnauthorised), 1u);
  EXPECT_EQ(pub.server->current_key_id(kAppService, kAppEventgroup), key_before);  // no rekey, no member
  EXPECT_EQ(pub.server->member_count(kAppService, kAppEventgroup), 1u);
  publish(pub, 4, 0x20);
  EXPECT_EQ(events_with_tag(a, 0x20), 4u);
  EXPECT_EQ(events_with_tag(x, 0x20), 0u);
}

TEST_F(KeyMgmtSim, NoCommonKemIsRefusedInHello) {
  Node& pub = add_publisher(kex::KemScheme::kX25519);
  Node& a = add_subscriber(2, pki().sub_a, {kex::KemScheme::kEcdhP256});
  start_all();
  ASSERT_TRUE(a.client->start().ok());
  run(Duration::milliseconds(100));
  EXPECT_EQ(a.client->last_error(kAppService, kAppEventgroup), KeyMgmtError::kUnsupportedKem);
  EXPECT_EQ(pub.server->counters().refused_for(KeyMgmtError::kUnsupportedKem), 1u);
  EXPECT_EQ(pub.server->counters().requests_accepted, 0u);
}

// ML-KEM-768 (and its hybrid) messages exceed one UDP datagram with the
// certificates: they travel as SOME/IP-TP segments.
TEST_F(KeyMgmtSim, HybridKemHandshakeRunsOverSomeIpTp) {
  Node& pub = add_publisher(kex::KemScheme::kHybridX25519MlKem768);
  Node& a = add_subscriber(2, pki().sub_a, {kex::KemScheme::kHybridX25519MlKem768});
  start_all();
  ASSERT_TRUE(a.client->start().ok());
  run(Duration::milliseconds(300));
  EXPECT_EQ(a.client->state(kAppService, kAppEventgroup), KeyClient::GroupState::kKeyed);
  EXPECT_GT(pub.runtime->counters().tp_segments_sent, 0u);
  publish(pub, 3, 0x30);
  EXPECT_EQ(events_with_tag(a, 0x30), 3u);
}

// The NTRU paper's 4-step negotiation as methods of the key service.
TEST_F(KeyMgmtSim, FourStepNegotiationRunsAsServiceMethods) {
  Node& pub = add_publisher();
  Node& a = add_subscriber(2, pki().sub_a);
  std::vector<std::vector<std::uint8_t>> server_keys;
  NegotiationServerConfig nc;
  nc.ids = ids_;
  nc.schemes = {kex::KemScheme::kMlKem768, kex::KemScheme::kX25519};
  auto server = NegotiationServer::create(nc, *pub.runtime, clock_,
                                          [&](const someip::Endpoint&, kex::KemScheme, const SecretBytes& k) {
                                            server_keys.emplace_back(k.span().begin(), k.span().end());
                                          });
  ASSERT_TRUE(server.ok());
  // Every datagram to the key service is replayed on the wire 1 ms later.
  net::ReplayHook replay(net::match_udp_dst_port(ids_.udp_port), Duration::milliseconds(1));
  segment_.add_hook(&replay);
  start_all();
  NegotiationClient client(ids_, *a.runtime);
  std::vector<std::vector<std::uint8_t>> client_keys;
  std::vector<KeyMgmtError> errors;
  auto done = [&](Result<const SecretBytes*, KeyMgmtError> r) {
    if (r.ok()) {
      client_keys.emplace_back((*r)->span().begin(), (*r)->span().end());
    } else {
      errors.push_back(r.error());
    }
  };
  for (auto scheme : {kex::KemScheme::kMlKem768, kex::KemScheme::kX25519}) {
    ASSERT_TRUE(client.start(scheme, done).ok());
    EXPECT_FALSE(client.start(scheme, done).ok());  // one at a time
    run(Duration::milliseconds(50));
  }
  segment_.remove_hook(&replay);
  ASSERT_EQ(client_keys.size(), 2u);
  ASSERT_EQ(server_keys.size(), 2u);
  EXPECT_EQ(client_keys[0], server_keys[0]);
  EXPECT_EQ(client_keys[1], server_keys[1]);
  EXPECT_NE(client_keys[0], client_keys[1]);
  EXPECT_EQ(client_keys[0].size(), 32u);
  // The replayed KeyExchange found its session used up.
  EXPECT_EQ((*server)->counters().completed, 2u);
  EXPECT_EQ((*server)->counters().refused_for(KeyMgmtError::kUnknownSession), 2u);
  // A scheme the server does not run is refused.
  ASSERT_TRUE(client.start(kex::KemScheme::kEcdhP256, done).ok());
  run(Duration::milliseconds(50));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], KeyMgmtError::kUnsupportedKem);
  EXPECT_EQ((*server)->counters().refused_for(KeyMgmtError::kUnsupportedKem), 1u);
}

}  // namespace
}  // namespace layersec::keymgmt
