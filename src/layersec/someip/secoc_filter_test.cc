// SecocFilter on its own, between two engines (a server node and a client
// node, runtime_secoc_test_support.h) and without a runtime or network:
// what is authenticated (the SOME/IP header unless payload-only), fail-closed
// unbound ids and the unprotected list, refused configurations, SD bound to
// the source address with per-source replay state, sync messages, and the
// cost clock.
#include "layersec/someip/secoc_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layersec/someip/runtime_secoc_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

const Endpoint kServerEp{IpAddress::v4(10, 0, 0, 1), kServicePort, L4Proto::kUdp};
const Endpoint kServerSd{IpAddress::v4(10, 0, 0, 1), kSdPort, L4Proto::kUdp};
const Endpoint kOtherSd{IpAddress::v4(10, 0, 0, 3), kSdPort, L4Proto::kUdp};

// A clock that moves 5 ns at every read (each timed call costs 5 ns).
class SteppingClock final : public Clock {
 public:
  TimePoint now() const override {
    t_ += Duration::nanoseconds(5);
    return t_;
  }

 private:
  mutable TimePoint t_;
};

Header event_header(std::uint16_t event, std::uint16_t session) {
  Header h;
  h.service_id = kService;
  h.method_id = event;
  h.session_id = session;
  h.interface_version = 1;
  h.message_type = MessageType::kNotification;
  return h;
}

// A whole message (header + body) and a parsed view of it.
struct Wire {
  std::vector<std::uint8_t> bytes;
  MessageView view() const {
    auto m = parse_message(bytes);
    EXPECT_TRUE(m.ok());
    return *m;
  }
};
Wire wire(const Header& h, ByteSpan body) {
  Wire w;
  w.bytes.resize(kHeaderSize + body.size());
  ByteWriter bw(w.bytes);
  EXPECT_TRUE(write_message(bw, h, body));
  return w;
}

struct Nodes {
  ManualClock clock{TimePoint{} + Duration::seconds(1000)};
  SecocNode server_sec, client_sec;
  RuntimeCounters server_counters, client_counters;
  RuntimeConfig server_cfg = secured_server_config();
  RuntimeConfig client_cfg = secured_client_config(2);
  std::unique_ptr<SecocFilter> server, client;
  std::vector<SecurityRejection> rejections;  // the client's

  explicit Nodes(const PairOptions& o = {}, const Clock* cost_clock = nullptr) {
    server_cfg.cost_clock = cost_clock;
    server_sec.start(server_engine_config(Duration::seconds(1)), clock.now());
    client_sec.start(client_engine_config(), clock.now());
    // The client's receive state for events is provisioned (no sync yet).
    EXPECT_TRUE(client_sec.engine->set_rx_freshness(
        kRxEvent, secoc::FreshnessCounters{server_sec.engine->trip(), server_sec.engine->reset(), 0}, clock.now()));
    server = std::make_unique<SecocFilter>(server_cfg, server_counters);
    client = std::make_unique<SecocFilter>(client_cfg, client_counters);
    SecocBindings sb = server_bindings(), cb = client_bindings();
    for (SecocBindings* b : {&sb, &cb}) {
      b->header = o.header;
      b->unprotected = o.unprotected;
    }
    server->attach(*server_sec.engine, sb, clock);
    client->attach(*client_sec.engine, cb, clock);
    client->on_rejection([this](const SecurityRejection& r) { rejections.push_back(r); });
  }

  // The server's protected event `body` with header `h`, as sent.
  Wire protect(const Header& h, ByteSpan body) {
    clock.advance(Duration::milliseconds(1));
    auto route = server->outbound(h.service_id, kInstance, h.method_id);
    EXPECT_TRUE(route.ok() && route->has_value());
    std::vector<std::uint8_t> secured(body.size() + kSecocOverhead);
    auto n = server->protect(**route, h, body, secured);
    EXPECT_TRUE(n.ok());
    secured.resize(*n);
    return wire(h, secured);
  }
};

TEST(SecocFilterTest, InactiveFilterPassesEverythingInClear) {
  RuntimeCounters c;
  SecocFilter f(server_config(), c);
  EXPECT_FALSE(f.active());
  EXPECT_FALSE(f.tx(kService, kInstance, kEvent));
  EXPECT_FALSE(f.unbound_refused(kService, kInstance, kEvent));
  EXPECT_FALSE(f.is_sync_event(kSyncService, 1, kSyncEvent));
  auto route = f.outbound(kService, kInstance, kEvent);
  ASSERT_TRUE(route.ok());
  EXPECT_FALSE(route->has_value());
  const std::vector<std::uint8_t> body{1, 2, 3};
  const Wire w = wire(event_header(kEvent, 1), body);
  ByteSpan payload = w.view().payload;
  EXPECT_TRUE(f.inbound(w.view(), kInstance, kServerEp, payload));
  EXPECT_EQ(std::vector<std::uint8_t>(payload.begin(), payload.end()), body);
  auto sd = f.protect_sd(w.bytes, kServerSd.address);
  ASSERT_TRUE(sd.has_value());
  EXPECT_EQ(sd->data(), w.bytes.data());
  EXPECT_EQ(f.verify_sd(w.bytes, kServerSd)->data(), w.bytes.data());
  EXPECT_EQ(f.sd_max_payload(), kMaxUdpPayload);
}

TEST(SecocFilterTest, ProtectedEventVerifiesAndItsHeaderIsAuthenticated) {
  Nodes n;
  const std::vector<std::uint8_t> body{0xA1, 0xA2, 0xA3, 0xA4};
  Wire w = n.protect(event_header(kEvent, 1), body);
  ByteSpan payload;
  ASSERT_TRUE(n.client->inbound(w.view(), kInstance, kServerEp, payload));
  EXPECT_EQ(std::vector<std::uint8_t>(payload.begin(), payload.end()), body);
  EXPECT_EQ(n.server_counters.secoc_protected, 1u);
  EXPECT_EQ(n.client_counters.secoc_verified, 1u);
  // The same trailer under a relabelled session id fails the MAC.
  Wire relabelled = n.protect(event_header(kEvent, 2), body);
  store_be16(relabelled.bytes.data() + 10, 7);
  ASSERT_FALSE(n.client->inbound(relabelled.view(), kInstance, kServerEp, payload));
  ASSERT_EQ(n.rejections.size(), 1u);
  EXPECT_EQ(n.rejections[0].reason, secoc::Rejection::kMacMismatch);
  EXPECT_EQ(n.rejections[0].method_or_event, kEvent);
  EXPECT_FALSE(n.rejections[0].unprotected);
  EXPECT_EQ(n.client_counters.secoc_rejected, 1u);
  // A plain message on the bound id is refused as unprotected.
  const Wire plain = wire(event_header(kEvent, 3), body);
  EXPECT_FALSE(n.client->inbound(plain.view(), kInstance, kServerEp, payload));
  EXPECT_TRUE(n.rejections.back().unprotected);
}

TEST(SecocFilterTest, PayloadOnlyLeavesTheHeaderUnauthenticated) {
  PairOptions o;
  o.header = HeaderAuth::kPayloadOnly;
  Nodes n(o);
  Wire w = n.protect(event_header(kEvent, 1), std::vector<std::uint8_t>{5, 6});
  store_be16(w.bytes.data() + 10, 9);  // relabelled session: not covered
  ByteSpan payload;
  EXPECT_TRUE(n.client->inbound(w.view(), kInstance, kServerEp, payload));
  EXPECT_FALSE(n.client->rx(kService, kInstance, kEvent)->header);
}

TEST(SecocFilterTest, UnboundIdsOfSecocServicesFailClosedUnlessListed) {
  PairOptions o;
  o.unprotected = {MessageRef{kService, 0xFFFF, 0x8005}};
  Nodes n(o);
  // Lookups: the client's bindings use the wildcard instance.
  EXPECT_EQ(n.client->rx(kService, 7, kEvent)->pdu, kRxEvent);
  EXPECT_FALSE(n.client->tx(kService, kInstance, kEvent));
  EXPECT_TRUE(n.client->secoc_service(kService));
  EXPECT_FALSE(n.client->secoc_service(0x4321));
  EXPECT_TRUE(n.client->unbound_refused(kService, kInstance, 0x8003));
  EXPECT_FALSE(n.client->unbound_refused(kService, kInstance, 0x8005));
  EXPECT_FALSE(n.client->unbound_refused(0x4321, 1, 0x8003));
  // Receive: refused, counted, reported as unbound.
  const std::vector<std::uint8_t> body{1};
  ByteSpan payload;
  EXPECT_FALSE(n.client->inbound(wire(event_header(0x8003, 1), body).view(), kInstance, kServerEp, payload));
  ASSERT_EQ(n.rejections.size(), 1u);
  EXPECT_TRUE(n.rejections[0].unbound);
  EXPECT_EQ(n.rejections[0].reason, secoc::Rejection::kUnknownPdu);
  EXPECT_EQ(n.client_counters.secoc_unbound_rejected, 1u);
  EXPECT_TRUE(n.client->inbound(wire(event_header(0x8005, 1), body).view(), kInstance, kServerEp, payload));
  // Send: refused and counted; the listed id and other services go in clear.
  auto refused = n.server->outbound(kService, kInstance, 0x8003);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), RuntimeError::kSecoc);
  EXPECT_EQ(n.server_counters.secoc_unbound_refused, 1u);
  // In clear: ok and no route.
  auto in_clear = [](const Result<std::optional<SecocRoute>, RuntimeError>& r) { return r.ok() && !r->has_value(); };
  EXPECT_TRUE(in_clear(n.server->outbound(kService, kInstance, 0x8005)));
  EXPECT_TRUE(in_clear(n.server->outbound(0x4321, 1, 0x8003)));
  // The sync event is sent in clear (its message carries its own MAC).
  EXPECT_TRUE(n.server->is_sync_event(kSyncService, 1, kSyncEvent));
  EXPECT_TRUE(in_clear(n.server->outbound(kSyncService, 1, kSyncEvent)));
}

TEST(SecocFilterTest, AttachRefusesInconsistentBindings) {
  ManualClock clock;
  SecocNode sec;
  sec.start(server_engine_config(Duration::seconds(1)), clock.now());
  auto refused = [&](SecocBindings b, const std::string& what) {
    RuntimeCounters c;
    SecocFilter f(secured_server_config(), c);
    try {
      f.attach(*sec.engine, std::move(b), clock);
      ADD_FAILURE() << "accepted; expected: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    EXPECT_FALSE(f.active());
  };
  SecocBindings b = server_bindings();
  b.messages.push_back(SecocBinding{kService, kInstance, 0x8009, 77, std::nullopt});
  refused(b, "unknown tx PDU 77");
  b = server_bindings();
  b.messages.push_back(SecocBinding{kService, kInstance, kEvent, kTxEvent, std::nullopt});
  refused(b, "tx bound twice");
  b = server_bindings();
  b.unprotected = {MessageRef{kService, kInstance, kEvent}};
  refused(b, "both bound and listed as unprotected");
  b = server_bindings();
  b.sd_tx_pdu = kTxEvent;
  refused(b, "must use timestamp freshness");
  b = server_bindings();
  b.sd_rx_pdu.reset();
  refused(b, "needs both a tx and an rx PDU");
  b = server_bindings();
  b.sd_tx_pdu.reset();
  b.sd_rx_pdu.reset();
  refused(b, "without SD protection");
  b.sd_unprotected = true;
  RuntimeCounters c;
  SecocFilter ok(secured_server_config(), c);
  ok.attach(*sec.engine, b, clock);  // explicit: accepted
  EXPECT_TRUE(ok.active());
  EXPECT_EQ(ok.sd_max_payload(), kMaxUdpPayload);
  b = server_bindings();
  b.sd_unprotected = true;
  refused(b, "sd_unprotected set together with SD PDUs");
}

TEST(SecocFilterTest, SdIsBoundToItsSourceAddressAndReplaysAreRefused) {
  Nodes n;
  EXPECT_EQ(n.server->sd_max_payload(), kMaxUdpPayload - kSecocOverhead);
  Header h;
  h.service_id = kSdServiceId;
  h.method_id = kSdMethodId;
  h.session_id = 1;
  h.interface_version = 1;
  h.message_type = MessageType::kNotification;
  const std::vector<std::uint8_t> entries{0xC0, 0, 0, 0, 0, 0, 0, 0};
  const Wire sd = wire(h, entries);
  n.clock.advance(Duration::milliseconds(1));
  auto secured = n.server->protect_sd(sd.bytes, kServerSd.address);
  ASSERT_TRUE(secured.has_value());
  const std::vector<std::uint8_t> datagram(secured->begin(), secured->end());
  EXPECT_GT(datagram.size(), sd.bytes.size());
  EXPECT_EQ(n.server_counters.secoc_sd_protected, 1u);
  // Relabelled to another source: the MAC covers the address.
  EXPECT_FALSE(n.client->verify_sd(datagram, kOtherSd).has_value());
  ASSERT_EQ(n.rejections.size(), 1u);
  EXPECT_TRUE(n.rejections[0].sd);
  EXPECT_EQ(n.rejections[0].reason, secoc::Rejection::kMacMismatch);
  // From the real source: the plain SD message, Length restored.
  auto plain = n.client->verify_sd(datagram, kServerSd);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(plain->begin(), plain->end()), sd.bytes);
  EXPECT_EQ(n.client_counters.secoc_sd_verified, 1u);
  // The same datagram again is a replay from that source.
  EXPECT_FALSE(n.client->verify_sd(datagram, kServerSd).has_value());
  EXPECT_EQ(n.rejections.back().reason, secoc::Rejection::kReplay);
  // Not SD at all (or unprotected garbage): malformed, unprotected.
  EXPECT_FALSE(n.client->verify_sd(std::vector<std::uint8_t>{1, 2, 3}, kServerSd).has_value());
  EXPECT_TRUE(n.rejections.back().unprotected);
}

TEST(SecocFilterTest, SyncMessagesGoToTheEngine) {
  Nodes n;
  std::vector<std::uint8_t> sync(n.server_sec.engine->sync_message_size());
  auto r = n.server_sec.engine->poll(n.clock.now(), sync);
  ASSERT_TRUE(r.ok());
  ASSERT_GT(r->sync_bytes, 0u);
  sync.resize(r->sync_bytes);
  Header h = event_header(kSyncEvent, 1);
  h.service_id = kSyncService;
  EXPECT_TRUE(n.client->on_sync(wire(h, sync).view(), 1, kServerEp));
  EXPECT_TRUE(n.client->on_sync(wire(h, sync).view(), 1, kServerEp));
  EXPECT_EQ(n.client_counters.secoc_syncs_accepted, 1u);
  EXPECT_EQ(n.client_counters.secoc_syncs_duplicate, 1u);
  sync[sync.size() - 1] ^= 1;
  n.clock.advance(Duration::milliseconds(1));
  EXPECT_FALSE(n.client->on_sync(wire(h, sync).view(), 1, kServerEp));
  ASSERT_EQ(n.rejections.size(), 1u);
  EXPECT_EQ(n.rejections[0].service_id, kSyncService);
}

TEST(SecocFilterTest, CostClockTimesEveryMessageCallAndNothingElse) {
  const SteppingClock cost;
  Nodes timed({}, &cost);
  timed.protect(event_header(kEvent, 1), std::vector<std::uint8_t>{1});
  timed.protect(event_header(kEvent, 2), std::vector<std::uint8_t>{2});
  EXPECT_EQ(timed.server_counters.secoc_protect_ns, 10u);  // 5 ns per call on this clock
  Nodes untimed;
  untimed.protect(event_header(kEvent, 1), std::vector<std::uint8_t>{1});
  EXPECT_EQ(untimed.server_counters.secoc_protect_ns, 0u);
}

}  // namespace
}  // namespace layersec::someip
