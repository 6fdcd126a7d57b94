// The attacks that got through an outside test of the SOME/IP + SecOC
// binding (issue 13), reproduced on the simulated segment: each relabels,
// holds back, replays or injects on the wire and checks that nothing is
// delivered that the sender did not authenticate, and that legitimate
// traffic keeps flowing.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "layersec/net/frame.h"
#include "layersec/net/sim_attack.h"
#include "layersec/someip/runtime_secoc_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;  // NOLINT

// SOME/IP header offsets in an Ethernet/IPv4/UDP frame without options.
constexpr std::size_t kSomeip = 14 + 20 + 8;
constexpr std::size_t kOffMethod = kSomeip + 2, kOffClient = kSomeip + 8, kOffSession = kSomeip + 10,
                      kOffProto = kSomeip + 12, kOffIface = kSomeip + 13, kOffType = kSomeip + 14,
                      kOffCode = kSomeip + 15;

// Rewrites matching frames in place (checksums refreshed, so only SecOC can
// notice) and counts them.
class RewriteHook final : public net::SwitchHook {
 public:
  using Rewrite = std::function<bool(std::vector<std::uint8_t>& frame)>;  // false: untouched
  RewriteHook(net::FrameFilter filter, Rewrite rewrite) : filter_(std::move(filter)), rewrite_(std::move(rewrite)) {}
  net::HookVerdict on_frame(const net::HookContext& ctx, std::vector<std::uint8_t>& frame,
                            net::SwitchControl&) override {
    if (!filter_(frame, ctx.ingress) || frame.size() < kSomeip + 16) return net::HookVerdict::forward();
    if (rewrite_(frame)) {
      net::refresh_checksums(frame);
      ++rewritten_;
    }
    return net::HookVerdict::forward();
  }
  [[nodiscard]] int rewritten() const { return rewritten_; }

 private:
  net::FrameFilter filter_;
  Rewrite rewrite_;
  int rewritten_ = 0;
};

std::uint8_t type_of(const std::vector<std::uint8_t>& f) { return f[kOffType]; }

// --- 1. the SOME/IP header is authenticated -----------------------------------

// An OK response relabelled as an ERROR with a return code: before, an
// authenticated-looking error reached the application.
int relabelled_error_outcome(HeaderAuth mode, std::vector<ReturnCode>& codes) {
  PairOptions o;
  o.header = mode;
  SecuredPair p(secured_server_config(), o);
  RewriteHook hook(net::match_udp_dst_port(kClientPort), [](std::vector<std::uint8_t>& f) {
    if (type_of(f) != 0x80) return false;  // RESPONSE
    f[kOffType] = 0x81;                      // ERROR
    f[kOffCode] = 0x01;                      // E_NOT_OK
    return true;
  });
  p.b.segment.add_hook(&hook);
  EXPECT_TRUE(p.client->rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{1, 2},
                                    [&](const ResponseResult& r) { codes.push_back(r.code); },
                                    Duration::milliseconds(200))
                  .ok());
  p.b.run(Duration::milliseconds(300));
  EXPECT_EQ(hook.rewritten(), 1);
  return static_cast<int>(p.client->rt->counters().secoc_rejected);
}

TEST(RuntimeSecocAttack, RelabelledReturnCodeIsRejected) {
  std::vector<ReturnCode> codes;
  EXPECT_EQ(relabelled_error_outcome(HeaderAuth::kSomeipHeader, codes), 1);
  // The forged error never arrives; the request ends by its timeout.
  EXPECT_EQ(codes, std::vector<ReturnCode>{ReturnCode::kTimeout});
  // The AUTOSAR payload-only layout (interoperability setting) cannot see it:
  // this is why it is not the default.
  codes.clear();
  EXPECT_EQ(relabelled_error_outcome(HeaderAuth::kPayloadOnly, codes), 0);
  EXPECT_EQ(codes, std::vector<ReturnCode>{ReturnCode::kNotOk});
}

TEST(RuntimeSecocAttack, SwappedSessionIdsAreRejected) {
  SecuredPair p;
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> got;
  std::vector<std::uint16_t> sessions;
  for (std::uint8_t v : {0x11, 0x22}) {
    auto s = p.client->rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{v},
                                   [&](const ResponseResult& r) {
                                     if (r.code == ReturnCode::kOk) got.emplace_back(r.session_id, std::vector<std::uint8_t>(r.payload.begin(), r.payload.end()));
                                   },
                                   Duration::milliseconds(200));
    ASSERT_TRUE(s.ok());
    sessions.push_back(*s);
  }
  // Before both requests are answered, swap the two session ids on the wire.
  const std::uint16_t x = static_cast<std::uint16_t>(sessions[0] ^ sessions[1]);
  RewriteHook hook(net::match_udp_dst_port(kClientPort), [x](std::vector<std::uint8_t>& f) {
    if (type_of(f) != 0x80) return false;
    const std::uint16_t s = static_cast<std::uint16_t>(load_be16(&f[kOffSession]) ^ x);
    store_be16(&f[kOffSession], s);
    return true;
  });
  p.b.segment.add_hook(&hook);
  p.b.run(Duration::milliseconds(300));
  EXPECT_EQ(hook.rewritten(), 2);
  EXPECT_TRUE(got.empty());  // neither payload reaches the other request
  EXPECT_EQ(p.client->rt->counters().secoc_rejected, 2U);
  EXPECT_EQ(p.client->rt->counters().request_timeouts, 2U);
}

TEST(RuntimeSecocAttack, ResponseRelabelledForAnotherClientIsRejected) {
  for (HeaderAuth mode : {HeaderAuth::kSomeipHeader, HeaderAuth::kPayloadOnly}) {
    SCOPED_TRACE(std::string(to_string(mode)));
    PairOptions o;
    o.header = mode;
    SecuredPair p(secured_server_config(), o);
    // Client B (node 3, client id 3) shares the group key.
    p.extra_sec.start(client_engine_config(), p.b.sim.now());
    Node& b = p.b.add(3, secured_client_config(3));
    SecocBindings cb = client_bindings();
    cb.header = mode;
    b.rt->attach_secoc(*p.extra_sec.engine, cb);
    ASSERT_TRUE(b.rt->start().ok());
    p.b.run(Duration::milliseconds(500));
    ASSERT_TRUE(b.rt->available(kService));
    // B's request never reaches the server (it stays pending at B); A's
    // answer is recorded.
    net::DropEveryNthHook drop_b(1, [&](ByteSpan f, net::PortId in) {
      return net::match_udp_dst_port(kServicePort)(f, in) && f.size() > 29 && f[29] == 3;  // IPv4 src 10.0.0.3
    });
    net::RecordingHook rec_a([&](ByteSpan f, net::PortId in) {
      return net::match_udp_dst_port(kClientPort)(f, in) && f.size() > kOffType && f[33] == 2 && f[kOffType] == 0x80;
    });
    p.b.segment.add_hook(&drop_b);
    p.b.segment.add_hook(&rec_a);
    std::vector<std::vector<std::uint8_t>> b_got;
    auto sb = b.rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{0xB0},
                            [&](const ResponseResult& r) {
                              if (r.code == ReturnCode::kOk) b_got.emplace_back(r.payload.begin(), r.payload.end());
                            },
                            Duration::milliseconds(300));
    ASSERT_TRUE(sb.ok());
    ASSERT_TRUE(p.client->rt->request(kService, kInstance, kMethod, std::vector<std::uint8_t>{0xA0, 0xA1},
                                      [](const ResponseResult&) {}, Duration::milliseconds(300))
                    .ok());
    p.b.run(Duration::milliseconds(20));
    p.b.segment.remove_hook(&drop_b);
    p.b.segment.remove_hook(&rec_a);
    ASSERT_EQ(rec_a.records().size(), 1U);
    // A's response relabelled with B's client id and pending session, to B.
    const auto& fa = rec_a.records()[0].frame;
    std::vector<std::uint8_t> msg(fa.begin() + kSomeip, fa.end());
    store_be16(&msg[8], 3);
    store_be16(&msg[10], *sb);
    p.b.segment.inject(p.server->port, spoofed_frame(1, kServicePort, 3, kClientPort, msg));
    p.b.run(Duration::milliseconds(20));
    if (mode == HeaderAuth::kSomeipHeader) {
      EXPECT_TRUE(b_got.empty());
      EXPECT_EQ(b.rt->counters().secoc_rejected, 1U);
    } else {
      // The hole the header binding closes: B takes A's answer as its own.
      ASSERT_EQ(b_got.size(), 1U);
      EXPECT_EQ(b_got[0], (std::vector<std::uint8_t>{0xA1, 0xA0}));
    }
  }
}

TEST(RuntimeSecocAttack, EveryHeaderFieldFlipIsRejected) {
  struct Case {
    const char* name;
    std::size_t off;
    std::uint8_t mask;
  };
  for (const Case c : {Case{"client id", kOffClient + 1, 0x04}, Case{"session id", kOffSession + 1, 0x40},
                       Case{"interface version", kOffIface, 0x02}, Case{"return code", kOffCode, 0x02},
                       Case{"protocol version", kOffProto, 0x02}, Case{"event id", kOffMethod + 1, 0x01}}) {
    SCOPED_TRACE(c.name);
    SecuredPair p;
    p.client->rt->on_event(kService, Runtime::kAnyEvent,
                           [&](const Notification& n) { p.events.emplace_back(n.payload.begin(), n.payload.end()); });
    RewriteHook hook(net::match_udp_dst_port(kClientPort), [c](std::vector<std::uint8_t>& f) {
      if (type_of(f) != 0x02 || load_be16(&f[kSomeip]) != kService) return false;  // our events only
      f[c.off] ^= c.mask;
      return true;
    });
    p.b.segment.add_hook(&hook);
    for (int i = 0; i < 5; ++i)
      ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{9}).ok());
    p.b.run(Duration::milliseconds(20));
    EXPECT_EQ(hook.rewritten(), 5);
    EXPECT_TRUE(p.events.empty());  // never delivered, whichever layer drops it
    p.b.segment.remove_hook(&hook);
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{10}).ok());
    p.b.run(Duration::milliseconds(20));
    EXPECT_EQ(p.events.size(), 1U);  // genuine traffic still flows
  }
}

// --- 2. unbound ids fail closed ---------------------------------------------------

TEST(RuntimeSecocAttack, ProtectedEventRelabelledAsUnboundIdIsRejectedByEveryMember) {
  RuntimeConfig sc = secured_server_config();
  sc.services[0].eventgroups[0].multicast = Endpoint{IpAddress::v4(239, 9, 9, 9), 30700, L4Proto::kUdp};
  SecuredPair p(sc);
  p.extra_sec.start(client_engine_config(), p.b.sim.now());
  Node& c2 = p.b.add(3, secured_client_config(3));
  c2.rt->attach_secoc(*p.extra_sec.engine, client_bindings());
  ASSERT_TRUE(c2.rt->start().ok());
  p.b.run(Duration::milliseconds(500));
  int delivered = 0;
  for (Node* n : {p.client, &c2})
    n->rt->on_event(kService, Runtime::kAnyEvent, [&](const Notification&) { ++delivered; });
  // kEvent (bound) relabelled as kField (an event of the same service with
  // no binding), on the multicast group.
  RewriteHook hook(net::match_udp_dst_port(30700), [](std::vector<std::uint8_t>& f) {
    if (load_be16(&f[kOffMethod]) != kEvent) return false;
    store_be16(&f[kOffMethod], kField);
    return true;
  });
  p.b.segment.add_hook(&hook);
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{1}).ok());
  p.b.run(Duration::milliseconds(20));
  EXPECT_EQ(hook.rewritten(), 20);
  EXPECT_EQ(delivered, 0);  // before: 20 of 20 at each member
  EXPECT_EQ(p.client->rt->counters().secoc_unbound_rejected, 20U);
  EXPECT_EQ(c2.rt->counters().secoc_unbound_rejected, 20U);
  ASSERT_FALSE(p.client_rejections.empty());
  EXPECT_TRUE(p.client_rejections.back().unbound);
  EXPECT_EQ(p.client_rejections.back().method_or_event, kField);
}

TEST(RuntimeSecocAttack, UnboundIdsAreNeverSentOrServedUnlessListedUnprotected) {
  {
    SecuredPair p;
    // The server refuses to send the unbound field unprotected ...
    auto st = p.server->rt->set_field(kService, kInstance, kField, std::vector<std::uint8_t>{5});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error(), RuntimeError::kSecoc);
    EXPECT_GE(p.server->rt->counters().secoc_unbound_refused, 1U);
    // ... the client refuses to call an unbound method ...
    auto r = p.client->rt->request(kService, kInstance, kFieldGetter, {}, [](const ResponseResult&) {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error(), RuntimeError::kSecoc);
    // ... and a plain request for it, spoofed from the client, gets no
    // answer at all (not even an error) and is counted.
    const std::vector<std::uint8_t> getter = {0x12, 0x34, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08,
                                              0x00, 0x02, 0x00, 0x42, 0x01, 0x01, 0x00, 0x00};
    net::RecordingHook answers(net::match_udp_dst_port(kClientPort));
    p.b.segment.add_hook(&answers);
    p.b.segment.inject(p.client->port, spoofed_frame(2, kClientPort, 1, kServicePort, getter));
    p.b.run(Duration::milliseconds(10));
    p.b.segment.remove_hook(&answers);
    EXPECT_EQ(p.server->rt->counters().secoc_unbound_rejected, 1U);
    for (const auto& a : answers.records()) EXPECT_NE(load_be16(&a.frame[kOffMethod]), kFieldGetter);
  }
  {
    // Listed as deliberately unprotected: sent and delivered in clear.
    PairOptions o;
    o.unprotected = {MessageRef{kService, 0xFFFF, kField}};
    SecuredPair p(secured_server_config(), o);
    std::vector<std::vector<std::uint8_t>> fields;
    p.client->rt->on_event(kService, kField, [&](const Notification& n) { fields.emplace_back(n.payload.begin(), n.payload.end()); });
    ASSERT_TRUE(p.server->rt->set_field(kService, kInstance, kField, std::vector<std::uint8_t>{5}).ok());
    p.b.run(Duration::milliseconds(10));
    EXPECT_EQ(fields, std::vector<std::vector<std::uint8_t>>{{5}});
    EXPECT_EQ(p.client->rt->counters().secoc_unbound_rejected, 0U);
  }
}

// --- 3. hold back and release -------------------------------------------------------

TEST(RuntimeSecocAttack, EventsHeldBackTenSecondsAreStaleWhenReleased) {
  SecuredPair p;
  net::DelayHook hold(Duration::seconds(10), Duration::zero(), 7, net::match_udp_dst_port(kClientPort));
  p.b.segment.add_hook(&hold);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{1}).ok());
    p.b.run(Duration::milliseconds(10));
  }
  p.b.segment.remove_hook(&hold);
  p.b.run(Duration::seconds(12));  // everything held is released and arrives
  EXPECT_GE(hold.delayed(), 100U);
  EXPECT_TRUE(p.events.empty());  // before: 880 of 1,000 accepted as fresh
  EXPECT_GE(p.client->rt->counters().secoc_rejected, 100U);
  // The live stream recovers at the next sync.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{2}).ok());
    p.b.run(Duration::milliseconds(10));
  }
  EXPECT_EQ(p.events.size(), 5U);
}

// --- 4. a restarted receiver resumes at once ------------------------------------------

TEST(RuntimeSecocAttack, RestartedReceiverLosesNoEventAfterResubscribing) {
  SecuredPair p;
  p.b.run(Duration::milliseconds(2500));  // a few reset cycles
  p.b.restart(*p.client, secured_client_config(2), /*graceful=*/false, [&](Runtime& rt) {
    p.client_sec.start(client_engine_config(), p.b.sim.now());  // store kept, state lost
    rt.attach_secoc(*p.client_sec.engine, client_bindings());
    rt.on_event(kService, kEvent, [&](const Notification& n) { p.events.emplace_back(n.payload.begin(), n.payload.end()); });
    rt.on_rejection([&](const SecurityRejection& r) { p.client_rejections.push_back(r); });
  });
  // Events every 10 ms from before the re-subscription on.
  int sent_after_available = 0;
  for (int i = 0; i < 60; ++i) {
    const bool avail = p.client->rt->available(kService) && p.client->rt->counters().secoc_syncs_accepted > 0;
    ASSERT_TRUE(p.server->rt->notify(kService, kInstance, kEvent, std::vector<std::uint8_t>{3}).ok() ||
                !avail);
    if (avail) ++sent_after_available;
    p.b.run(Duration::milliseconds(10));
  }
  ASSERT_GT(sent_after_available, 20);
  // Before: the re-sent latest sync was a replay to the restarted receiver,
  // which then dropped everything until the next periodic sync.
  EXPECT_GE(static_cast<int>(p.events.size()), sent_after_available);
  for (const auto& r : p.client_rejections) ADD_FAILURE() << "rejected " << secoc::to_string(r.reason);
}

// --- 6. service discovery ------------------------------------------------------------

TEST(RuntimeSecocAttack, SpoofedRelabelledAndEarlierRunSdIsRejected) {
  SecuredPair p;
  ASSERT_TRUE(p.client->rt->available(kService));
  // (a) A plain Offer from the server's address naming the attacker (10.0.0.9).
  const std::vector<std::uint8_t> offer = {
      0xFF, 0xFF, 0x81, 0x00, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00, 0x05, 0x01, 0x01, 0x02, 0x00,
      0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x12, 0x34, 0x00, 0x01,
      0x01, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x09, 0x04, 0x00,
      10, 0, 0, 9, 0x00, 0x11, 0x77, 0x2D};
  const auto rejected_before = p.client->rt->counters().secoc_rejected;
  p.b.segment.inject(p.server->port, spoofed_frame(1, kSdPort, 2, kSdPort, offer));
  p.b.run(Duration::milliseconds(10));
  EXPECT_EQ(p.client->rt->counters().secoc_rejected, rejected_before + 1);
  // (b) The client's genuine protected SD, relabelled as coming from another
  // host (10.0.0.9): the source address is authenticated.
  net::RecordingHook rec(net::match_udp_dst_port(kSdPort));
  p.b.segment.add_hook(&rec);
  p.b.run(Duration::milliseconds(2000));
  p.b.segment.remove_hook(&rec);
  ASSERT_FALSE(rec.records().empty());
  int relabelled = 0;
  const auto server_rej = p.server->rt->counters().secoc_rejected;
  for (const auto& r : rec.records()) {
    if (r.frame.size() < kSomeip || r.frame[29] != 2) continue;  // IPv4 src 10.0.0.2
    std::vector<std::uint8_t> msg(r.frame.begin() + kSomeip, r.frame.end());
    p.b.segment.inject(p.client->port, spoofed_frame(9, kSdPort, 1, kSdPort, msg));
    ++relabelled;
  }
  p.b.run(Duration::milliseconds(10));
  ASSERT_GT(relabelled, 0);
  EXPECT_EQ(p.server->rt->counters().secoc_rejected, server_rej + static_cast<std::uint64_t>(relabelled));
  EXPECT_EQ(p.server->rt->subscriber_count(kService, kInstance, kEventgroup), 1U);
  // (c) The server stops (StopOffer recorded); both nodes restart with the
  // same keys; the earlier run's SD, StopOffer included, is replayed.
  net::ReplayHook earlier(net::match_udp_dst_port(kSdPort));
  p.b.segment.add_hook(&earlier);
  p.server->rt->stop();
  p.b.run(Duration::milliseconds(10));
  p.b.segment.remove_hook(&earlier);
  ASSERT_GE(earlier.recorded(), 1U);
  p.b.run(Duration::seconds(5));
  p.b.restart(*p.server, secured_server_config(), false, [&](Runtime& rt) {
    p.server_sec.start(server_engine_config(Duration::seconds(1)), p.b.sim.now());
    rt.attach_secoc(*p.server_sec.engine, server_bindings());
  });
  p.b.restart(*p.client, secured_client_config(2), false, [&](Runtime& rt) {
    p.client_sec.start(client_engine_config(), p.b.sim.now());
    rt.attach_secoc(*p.client_sec.engine, client_bindings());
  });
  p.b.run(Duration::milliseconds(500));
  ASSERT_TRUE(p.client->rt->available(kService));
  const auto rej = p.client->rt->counters().secoc_rejected;
  earlier.replay_recorded(p.b.segment);
  p.b.run(Duration::milliseconds(20));
  EXPECT_GT(p.client->rt->counters().secoc_rejected, rej);
  EXPECT_TRUE(p.client->rt->available(kService));  // the replayed StopOffer did nothing
}

}  // namespace
}  // namespace layersec::someip
