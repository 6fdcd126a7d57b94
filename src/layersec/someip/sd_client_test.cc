#include "layersec/someip/sd_client.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/someip/sd_endpoint.h"
#include "layersec/someip/sd_test_support.h"

namespace layersec::someip {
namespace {

using testing_support::endpoint_opts;
using testing_support::FixedRandom;

constexpr auto ms = Duration::milliseconds;
const TimePoint kT0 = TimePoint::from_ns(0);
const Endpoint kServerSd{IpAddress::v4(10, 0, 0, 1), 30490, L4Proto::kUdp};
const Endpoint kServerUdp{IpAddress::v4(10, 0, 0, 1), 30509, L4Proto::kUdp};
const Endpoint kMyUdp{IpAddress::v4(10, 0, 0, 2), 40001, L4Proto::kUdp};

SdClientConfig config() {
  SdClientConfig c;
  c.service_id = 0x1234;
  c.timing.initial_delay_min = ms(100);
  c.timing.initial_delay_max = ms(100);
  c.timing.repetitions_base_delay = ms(100);
  c.timing.repetitions_max = 2;
  c.udp_endpoint = kMyUdp;
  c.eventgroups = {0x10};
  return c;
}

SdRxContext rx(TimePoint now, Endpoint src = kServerSd) { return SdRxContext{now, src, true, true}; }

SdEntryOptions offer_opts() {
  SdEntryOptions o;
  o.items[0] = SdOption::ipv4_endpoint(kServerUdp.address, L4Proto::kUdp, kServerUdp.port);
  o.count = 1;
  return o;
}

TEST(SdClient, FindPhasesStopAtMaxAndAreNeverCyclic) {
  FixedRandom rnd(ms(0));
  SdClient c(config(), rnd);
  SdOutput out;
  c.request(kT0, out);
  EXPECT_EQ(c.state(), SdClient::State::kInitialWait);
  std::vector<TimePoint> finds;
  for (int i = 0; i < 100; ++i) {
    const TimePoint t = c.next_deadline();
    if (t > kT0 + ms(60000)) break;
    out.clear();
    c.on_timer(t, out);
    for (const auto& s : out.sends) {
      EXPECT_TRUE(s.multicast);
      EXPECT_EQ(s.entry.kind(), EntryKind::kFindService);
      EXPECT_EQ(s.entry.instance_id, 0xFFFF);
      finds.push_back(t);
    }
  }
  // Initial find at 100, repetitions at +100 and +200 more, then nothing.
  ASSERT_EQ(finds.size(), 3u);
  EXPECT_EQ(finds[0], kT0 + ms(100));
  EXPECT_EQ(finds[1], kT0 + ms(200));
  EXPECT_EQ(finds[2], kT0 + ms(400));
  EXPECT_EQ(c.state(), SdClient::State::kMain);
}

TEST(SdClient, OfferStopsFindsAndTriggersSubscribeEveryTime) {
  FixedRandom rnd(ms(0));
  SdClient c(config(), rnd);
  SdOutput out;
  c.request(kT0, out);
  c.on_timer(kT0 + ms(100), out);  // first find
  ASSERT_EQ(c.state(), SdClient::State::kRepetition);
  out.clear();
  const SdEntry offer = SdEntry::offer_service(0x1234, 7, 1, 0, 3);
  c.on_entry(rx(kT0 + ms(150)), offer, offer_opts(), out);
  EXPECT_EQ(c.state(), SdClient::State::kMain);  // feat_req_someipsd_867
  EXPECT_EQ(c.next_deadline(), kT0 + ms(3150));  // only the offer TTL is left
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kServiceAvailable);
  EXPECT_EQ(out.events[0].instance_id, 7);
  EXPECT_EQ(out.events[0].udp, kServerUdp);
  ASSERT_EQ(out.sends.size(), 1u);
  const auto& sub = out.sends[0];
  EXPECT_FALSE(sub.multicast);
  EXPECT_EQ(sub.destination, kServerSd);
  EXPECT_EQ(sub.entry.kind(), EntryKind::kSubscribeEventgroup);
  EXPECT_EQ(sub.entry.instance_id, 7);
  EXPECT_EQ(sub.entry.eventgroup_id, 0x10);
  ASSERT_EQ(sub.run1.size(), 1u);
  EXPECT_EQ(sub.run1[0].endpoint, kMyUdp);
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kPending);
  out.clear();
  // Ack (with a multicast option) -> one event.
  SdEntryOptions mc;
  mc.items[0] = SdOption::ipv4_multicast(IpAddress::v4(239, 0, 0, 1), 30600);
  mc.count = 1;
  c.on_entry(rx(kT0 + ms(160)), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 3), mc, out);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kSubscriptionAcked);
  ASSERT_TRUE(out.events[0].multicast.has_value());
  EXPECT_EQ(out.events[0].multicast->port, 30600);
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  out.clear();
  // Cyclic offer 1 s later: renew subscription, no new available event.
  c.on_entry(rx(kT0 + ms(1150)), offer, offer_opts(), out);
  EXPECT_TRUE(out.events.empty());
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroup);
  out.clear();
  // Renewal Ack: no event.
  c.on_entry(rx(kT0 + ms(1160)), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 3), mc, out);
  EXPECT_TRUE(out.events.empty());
  // Ack from a stranger is ignored.
  const Endpoint stranger{IpAddress::v4(10, 6, 6, 6), 30490, L4Proto::kUdp};
  c.on_entry(rx(kT0 + ms(1170), stranger), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 0), mc, out);
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  // Release: StopSubscribe.
  c.release(kT0 + ms(1200), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kStopSubscribeEventgroup);
  EXPECT_EQ(c.state(), SdClient::State::kDown);
}

TEST(SdClient, OfferTtlExpiryAndStopOffer) {
  FixedRandom rnd(ms(0));
  SdClient c(config(), rnd);
  SdOutput out;
  const SdEntry offer = SdEntry::offer_service(0x1234, 7, 1, 0, 3);
  // Offers are tracked even before request().
  c.on_entry(rx(kT0), offer, offer_opts(), out);
  EXPECT_TRUE(c.available());
  EXPECT_TRUE(out.sends.empty());  // not requested: no subscribe
  out.clear();
  c.on_timer(kT0 + ms(2999), out);
  EXPECT_TRUE(c.available());
  c.on_timer(kT0 + ms(3000), out);
  EXPECT_FALSE(c.available());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kServiceUnavailable);
  out.clear();
  // Requested with an offer known: straight to main and subscribe.
  c.on_entry(rx(kT0 + ms(4000)), offer, offer_opts(), out);
  out.clear();
  c.request(kT0 + ms(4001), out);
  EXPECT_EQ(c.state(), SdClient::State::kMain);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroup);
  out.clear();
  // StopOffer from the offering peer.
  c.on_entry(rx(kT0 + ms(4100)), SdEntry::offer_service(0x1234, 7, 1, 0, 0), offer_opts(), out);
  EXPECT_FALSE(c.available());
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kNotSubscribed);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kServiceUnavailable);
  out.clear();
  // Infinite TTL never expires.
  c.on_entry(rx(kT0 + ms(5000)), SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite), offer_opts(), out);
  EXPECT_EQ(c.offer()->expiry, TimePoint::max());
  // Reboot of the offering peer makes it unavailable.
  out.clear();
  c.on_peer_reboot(kServerSd, out);
  EXPECT_FALSE(c.available());
  ASSERT_FALSE(out.events.empty());
  EXPECT_EQ(out.events[0].kind, SdEventKind::kServiceUnavailable);
}

TEST(SdClient, MatchingRules) {
  FixedRandom rnd(ms(0));
  SdClientConfig cfg = config();
  cfg.instance_id = 3;
  cfg.major_version = 2;
  SdClient c(cfg, rnd);
  EXPECT_TRUE(c.matches(SdEntry::offer_service(0x1234, 3, 2, 9, 3)));
  EXPECT_FALSE(c.matches(SdEntry::offer_service(0x1234, 4, 2, 9, 3)));
  EXPECT_FALSE(c.matches(SdEntry::offer_service(0x1234, 3, 1, 9, 3)));
  EXPECT_FALSE(c.matches(SdEntry::offer_service(0x1235, 3, 2, 9, 3)));
  EXPECT_FALSE(c.matches(SdEntry::find_service(0x1234, 3, 2, 9, 3)));
  // No offer known: Acks are not ours.
  EXPECT_FALSE(c.matches(SdEntry::subscribe_ack(0x1234, 3, 2, 0x10, 3)));
}

TEST(SdClient, NackEvent) {
  FixedRandom rnd(ms(0));
  SdClient c(config(), rnd);
  SdOutput out;
  c.request(kT0, out);
  c.on_entry(rx(kT0), SdEntry::offer_service(0x1234, 7, 1, 0, 3), offer_opts(), out);
  out.clear();
  SdEntryOptions none;
  c.on_entry(rx(kT0 + ms(1)), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 0), none, out);
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kSubscriptionNacked);
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kNotSubscribed);
}

// ---- binding entries to their sender (issue 13 item 6) ----------------------

const Endpoint kAttackerSd{IpAddress::v4(10, 0, 0, 9), 30490, L4Proto::kUdp};
const Endpoint kAttackerUdp{IpAddress::v4(10, 0, 0, 9), 30509, L4Proto::kUdp};

// A requested client bound to kServerSd with its eventgroup acked.
SdClient bound_client(RandomSource& rnd, SdClientConfig cfg = config()) {
  SdClient c(std::move(cfg), rnd);
  SdOutput out;
  c.request(kT0, out);
  c.on_entry(rx(kT0), SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite), offer_opts(), out);
  c.on_entry(rx(kT0), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 3), SdEntryOptions{}, out);
  return c;
}

void expect_still_bound(const SdClient& c) {
  ASSERT_TRUE(c.available());
  EXPECT_EQ(c.offer()->peer, kServerSd);
  EXPECT_EQ(c.offer()->udp, kServerUdp);
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
}

TEST(SdClientBinding, OfferFromServerAddressNamingAnotherEndpointIsRefused) {
  // The attack: an Offer spoofed from the server's SD endpoint that names the
  // attacker as the service endpoint. Before: the client sent its requests
  // there and dropped the server's events (wrong source).
  FixedRandom rnd(ms(0));
  SdClient c = bound_client(rnd);
  ASSERT_EQ(c.drops().total(), 0u);
  SdOutput out;
  const SdEntry offer = SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite);
  c.on_entry(rx(kT0 + ms(10)), offer, endpoint_opts(kAttackerUdp), out);
  expect_still_bound(c);
  EXPECT_TRUE(out.sends.empty());  // no renewal triggered by it either
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(c.drops()[SdDropReason::kOfferEndpointNotSource], 1u);
  EXPECT_EQ(out.drops[SdDropReason::kOfferEndpointNotSource], 1u);
  // One good option and one naming another host: refused as a whole.
  SdEntryOptions mixed = offer_opts();
  mixed.items[mixed.count++] = endpoint_option(Endpoint{kAttackerUdp.address, 30510, L4Proto::kTcp});
  c.on_entry(rx(kT0 + ms(11)), offer, mixed, out);
  // An IPv6 endpoint cannot be the source of an IPv4 datagram.
  c.on_entry(rx(kT0 + ms(12)), offer,
             endpoint_opts(Endpoint{IpAddress::v6({0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), 30509,
                                    L4Proto::kUdp}),
             out);
  expect_still_bound(c);
  EXPECT_EQ(c.drops()[SdDropReason::kOfferEndpointNotSource], 3u);
  EXPECT_EQ(c.drops().total(), 3u);
  // The genuine cyclic offer still renews.
  out.clear();
  c.on_entry(rx(kT0 + ms(1000)), offer, offer_opts(), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].destination, kServerSd);
}

TEST(SdClientBinding, OfferReplayedFromAnotherHostDoesNotCaptureTheClient) {
  // A server's offer re-sent from another host (a relabelled or replayed
  // datagram): before, a client without an offer bound to the replayer and
  // sent its Subscribes there, while the real server's offers were ignored.
  FixedRandom rnd(ms(0));
  SdClient c(config(), rnd);
  SdOutput out;
  c.request(kT0, out);
  out.clear();
  const SdEntry offer = SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite);
  c.on_entry(rx(kT0 + ms(1), kAttackerSd), offer, offer_opts(), out);
  EXPECT_FALSE(c.available());
  EXPECT_TRUE(out.sends.empty());
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(c.drops()[SdDropReason::kOfferEndpointNotSource], 1u);
  c.on_entry(rx(kT0 + ms(2)), offer, offer_opts(), out);
  ASSERT_TRUE(c.available());
  EXPECT_EQ(c.offer()->peer, kServerSd);
}

TEST(SdClientBinding, StopOfferOnlyFromTheOfferer) {
  FixedRandom rnd(ms(0));
  SdClient c = bound_client(rnd);
  SdOutput out;
  const SdEntry stop = SdEntry::offer_service(0x1234, 7, 1, 0, 0);
  // From a third host, naming the server's endpoint (a replayed StopOffer).
  c.on_entry(rx(kT0 + ms(10), kAttackerSd), stop, offer_opts(), out);
  EXPECT_EQ(c.drops()[SdDropReason::kStopOfferNotFromOfferer], 1u);
  // From a third host naming its own endpoint.
  c.on_entry(rx(kT0 + ms(11), kAttackerSd), stop, endpoint_opts(kAttackerUdp), out);
  EXPECT_EQ(c.drops()[SdDropReason::kStopOfferNotFromOfferer], 2u);
  // From the offerer's SD endpoint but naming another host's endpoint.
  c.on_entry(rx(kT0 + ms(12)), stop, endpoint_opts(kAttackerUdp), out);
  EXPECT_EQ(c.drops()[SdDropReason::kStopOfferEndpointNotSource], 1u);
  // Another port of the server's address is another SD peer.
  c.on_entry(rx(kT0 + ms(13), Endpoint{kServerSd.address, 30491, L4Proto::kUdp}), stop, offer_opts(), out);
  EXPECT_EQ(c.drops()[SdDropReason::kStopOfferNotFromOfferer], 3u);
  // Another instance: not ours, nothing to stop, nothing counted.
  c.on_entry(rx(kT0 + ms(14), kAttackerSd), SdEntry::offer_service(0x1234, 8, 1, 0, 0), offer_opts(), out);
  EXPECT_EQ(c.drops().total(), 4u);
  expect_still_bound(c);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.sends.empty());
  // The offerer's own StopOffer (with or without its endpoint) ends it.
  c.on_entry(rx(kT0 + ms(20)), stop, SdEntryOptions{}, out);
  EXPECT_FALSE(c.available());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kServiceUnavailable);
}

TEST(SdClientBinding, AckAndNackOnlyFromTheServerSubscribedTo) {
  FixedRandom rnd(ms(0));
  SdClient c = bound_client(rnd);
  SdOutput out;
  c.on_entry(rx(kT0 + ms(10), kAttackerSd), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 0), SdEntryOptions{}, out);
  c.on_entry(rx(kT0 + ms(11), Endpoint{kServerSd.address, 40000, L4Proto::kUdp}),
             SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 0), SdEntryOptions{}, out);
  expect_still_bound(c);
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(c.drops()[SdDropReason::kAckNotFromServer], 2u);
  // An Ack from a stranger cannot move a pending subscription to acked.
  c.on_entry(rx(kT0 + ms(20)), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 0), SdEntryOptions{}, out);
  ASSERT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kNotSubscribed);
  c.on_entry(rx(kT0 + ms(1000)), SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite), offer_opts(), out);
  ASSERT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kPending);
  c.on_entry(rx(kT0 + ms(1001), kAttackerSd), SdEntry::subscribe_ack(0x1234, 7, 1, 0x10, 3), SdEntryOptions{}, out);
  EXPECT_EQ(c.subscription_state(0x10), SdClient::SubscriptionState::kPending);
  EXPECT_EQ(c.drops()[SdDropReason::kAckNotFromServer], 3u);
}

TEST(SdClientBinding, PinnedServersDefeatAnEarlyOffer) {
  // The attack: a host that offers the service before the server starts.
  const SdEntry offer = SdEntry::offer_service(0x1234, 7, 1, 0, kTtlInfinite);
  FixedRandom rnd(ms(0));
  {
    // Without pinning, an attacker naming its own endpoint is a server like
    // any other: it captures the client, and the real server is ignored.
    // (Only allowed_servers or protected SD with per-peer keys tell them apart.)
    SdClient c(config(), rnd);
    SdOutput out;
    c.request(kT0, out);
    c.on_entry(rx(kT0 + ms(1), kAttackerSd), offer, endpoint_opts(kAttackerUdp), out);
    c.on_entry(rx(kT0 + ms(2)), offer, offer_opts(), out);
    ASSERT_TRUE(c.available());
    EXPECT_EQ(c.offer()->peer, kAttackerSd);
    EXPECT_EQ(c.drops()[SdDropReason::kOfferBoundElsewhere], 1u);
  }
  SdClientConfig cfg = config();
  cfg.allowed_servers = {kServerSd.address};
  SdClient c(cfg, rnd);
  SdOutput out;
  c.request(kT0, out);
  out.clear();
  for (int i = 0; i < 5; ++i)
    c.on_entry(rx(kT0 + ms(1 + i), kAttackerSd), offer, endpoint_opts(kAttackerUdp), out);
  EXPECT_FALSE(c.available());
  EXPECT_TRUE(out.sends.empty());  // no Subscribe to the attacker
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(c.drops()[SdDropReason::kOfferServerNotAllowed], 5u);
  EXPECT_EQ(out.drops[SdDropReason::kOfferServerNotAllowed], 5u);
  c.on_entry(rx(kT0 + ms(10)), offer, offer_opts(), out);
  ASSERT_TRUE(c.available());
  EXPECT_EQ(c.offer()->peer, kServerSd);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].destination, kServerSd);
  // A reboot of the pinned server still works: lost, then found again.
  out.clear();
  c.on_peer_reboot(kServerSd, out);
  EXPECT_FALSE(c.available());
  c.on_entry(rx(kT0 + ms(20)), offer, offer_opts(), out);
  EXPECT_TRUE(c.available());
  EXPECT_EQ(c.drops().total(), 5u);
}

// ---- SdEndpoint: session ids and reboot detection ---------------------------

TEST(SdEndpoint, SessionIdsPerRelationAndRebootFlagUntilWrap) {
  SdEndpoint ep;
  const Endpoint a{IpAddress::v4(10, 0, 0, 5), 30490, L4Proto::kUdp};
  const Endpoint b{IpAddress::v4(10, 0, 0, 6), 30490, L4Proto::kUdp};
  auto m1 = ep.next_multicast();
  EXPECT_EQ(m1.session_id, 1);
  EXPECT_EQ(m1.flags, kSdFlagReboot | kSdFlagUnicast);
  EXPECT_EQ(ep.next_multicast().session_id, 2);
  EXPECT_EQ(ep.next_unicast(a).session_id, 1);  // separate counter per peer
  EXPECT_EQ(ep.next_unicast(a).session_id, 2);
  EXPECT_EQ(ep.next_unicast(b).session_id, 1);
  EXPECT_EQ(ep.next_multicast().session_id, 3);
  // Wrap: 0xFFFF still has the reboot flag, then 1 without it; never 0.
  SdSessionCounter c;
  SdSessionCounter::Stamp s{};
  for (int i = 0; i < 0xFFFF; ++i) {
    s = c.take();
    ASSERT_NE(s.session_id, 0);
    ASSERT_TRUE(s.reboot);
  }
  EXPECT_EQ(s.session_id, 0xFFFF);
  s = c.take();
  EXPECT_EQ(s.session_id, 1);
  EXPECT_FALSE(s.reboot);
  s = c.take();
  EXPECT_EQ(s.session_id, 2);
  EXPECT_FALSE(s.reboot);
}

TEST(SdEndpoint, RebootDetectionPerPeerAndRelation) {
  // feat_req_someipsd_764
  SdEndpoint ep;
  const Endpoint a{IpAddress::v4(10, 0, 0, 5), 30490, L4Proto::kUdp};
  const Endpoint b{IpAddress::v4(10, 0, 0, 6), 30490, L4Proto::kUdp};
  EXPECT_FALSE(ep.observe(a, true, 1, true));
  EXPECT_FALSE(ep.observe(a, true, 2, true));
  EXPECT_FALSE(ep.observe(a, false, 1, true));  // unicast relation has its own counter
  EXPECT_FALSE(ep.observe(a, false, 2, true));
  EXPECT_FALSE(ep.observe(b, true, 9, true));
  // old.reboot=1, new.reboot=1, old.session >= new.session -> reboot
  EXPECT_TRUE(ep.observe(a, true, 2, true));
  EXPECT_FALSE(ep.observe(a, true, 3, true));
  // After a wrap the flag clears; then 0 -> 1 is a reboot.
  EXPECT_FALSE(ep.observe(b, true, 0xFFFF, true));
  EXPECT_FALSE(ep.observe(b, true, 1, false));
  EXPECT_FALSE(ep.observe(b, true, 2, false));
  EXPECT_TRUE(ep.observe(b, true, 1, true));
  // old.reboot=0, new.reboot=0, decreasing session: not a reboot by the rule.
  EXPECT_FALSE(ep.observe(a, false, 0xFFFF, true));
  EXPECT_FALSE(ep.observe(a, false, 1, false));
  EXPECT_FALSE(ep.observe(a, false, 1, false));
  // Bounded peer table.
  SdEndpoint small(2);
  for (std::uint8_t i = 0; i < 10; ++i)
    EXPECT_FALSE(small.observe(Endpoint{IpAddress::v4(10, 1, 0, i), 30490, L4Proto::kUdp}, true, 1, true));
  EXPECT_EQ(small.tracked_peers(), 2u);
}

}  // namespace
}  // namespace layersec::someip
