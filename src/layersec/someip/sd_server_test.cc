#include "layersec/someip/sd_server.h"

#include <gtest/gtest.h>

#include <vector>

#include "layersec/someip/sd_test_support.h"

namespace layersec::someip {
namespace {

using testing_support::endpoint_opts;
using testing_support::FixedRandom;

constexpr auto ms = Duration::milliseconds;
const TimePoint kT0 = TimePoint::from_ns(0);
const Endpoint kClientSd{IpAddress::v4(10, 0, 0, 2), 30490, L4Proto::kUdp};
const Endpoint kClientUdp{IpAddress::v4(10, 0, 0, 2), 40001, L4Proto::kUdp};

SdServerConfig config() {
  SdServerConfig c;
  c.service_id = 0x1234;
  c.instance_id = 0x0001;
  c.major_version = 1;
  c.minor_version = 0;
  c.udp_endpoint = Endpoint{IpAddress::v4(10, 0, 0, 1), 30509, L4Proto::kUdp};
  c.eventgroups.push_back({0x10, std::nullopt});
  c.eventgroups.push_back({0x20, Endpoint{IpAddress::v4(239, 0, 0, 1), 30600, L4Proto::kUdp}});
  return c;
}

struct Sent {
  TimePoint at;
  SdOutgoing what;
};

// Runs the server's timers up to `until`, recording every send.
std::vector<Sent> run(SdServer& s, TimePoint from, TimePoint until, SdOutput& events) {
  std::vector<Sent> sent;
  TimePoint now = from;
  for (int guard = 0; guard < 10000; ++guard) {
    const TimePoint t = s.next_deadline();
    if (t > until) break;
    now = t;
    SdOutput out;
    s.on_timer(now, out);
    for (auto& o : out.sends) sent.push_back({now, o});
    for (auto& e : out.events) events.events.push_back(e);
  }
  return sent;
}

TEST(SdServer, SpecExampleTiming) {
  // feat_req_someipsd_77: base 100 ms, REPETITIONS_MAX 2 -> offers at t0,
  // t0+100, t0+300, then a 400 ms wait, then cyclic offers.
  SdServerConfig c = config();
  c.timing.initial_delay_min = ms(50);
  c.timing.initial_delay_max = ms(150);
  c.timing.repetitions_base_delay = ms(100);
  c.timing.repetitions_max = 2;
  c.timing.cyclic_offer_delay = ms(1000);
  FixedRandom rnd(ms(30));
  SdServer s(c, rnd);
  EXPECT_EQ(s.state(), SdServer::State::kDown);
  EXPECT_EQ(s.next_deadline(), TimePoint::max());
  s.start(kT0);
  EXPECT_EQ(s.state(), SdServer::State::kInitialWait);
  EXPECT_EQ(s.next_deadline(), kT0 + ms(80));  // min 50 + 30 from the random source
  SdOutput ev;
  const auto sent = run(s, kT0, kT0 + ms(3800), ev);
  const TimePoint t0 = kT0 + ms(80);
  const std::vector<TimePoint> expect = {t0, t0 + ms(100), t0 + ms(300), t0 + ms(700),
                                         t0 + ms(1700), t0 + ms(2700), t0 + ms(3700)};
  ASSERT_EQ(sent.size(), expect.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].at, expect[i]) << i;
    EXPECT_TRUE(sent[i].what.multicast);
    EXPECT_EQ(sent[i].what.entry.kind(), EntryKind::kOfferService);
    EXPECT_EQ(sent[i].what.entry.ttl, kTtlInfinite);
    ASSERT_EQ(sent[i].what.run1.size(), 1u);
    EXPECT_EQ(sent[i].what.run1[0].endpoint, *c.udp_endpoint);
  }
  EXPECT_EQ(s.state(), SdServer::State::kMain);
}

TEST(SdServer, VsomeipDefaultsAndNoRepetitionPhase) {
  SdServerConfig c = config();
  SdTiming defaults;
  EXPECT_EQ(defaults.initial_delay_max, ms(3000));
  EXPECT_EQ(defaults.repetitions_base_delay, ms(10));
  EXPECT_EQ(defaults.repetitions_max, 3u);
  EXPECT_EQ(defaults.cyclic_offer_delay, ms(1000));
  EXPECT_EQ(defaults.ttl, kTtlInfinite);
  // Defaults: sends at t0, +10, +30, +70, then main at +150, +1150.
  FixedRandom rnd(ms(500));
  SdServer s(c, rnd);
  s.start(kT0);
  SdOutput ev;
  auto sent = run(s, kT0, kT0 + ms(1700), ev);
  const TimePoint t0 = kT0 + ms(500);
  const std::vector<TimePoint> expect = {t0, t0 + ms(10), t0 + ms(30), t0 + ms(70), t0 + ms(150),
                                         t0 + ms(1150)};
  ASSERT_EQ(sent.size(), expect.size());
  for (std::size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(sent[i].at, expect[i]) << i;

  // REPETITIONS_MAX = 0: straight to main, first cyclic offer one delay later.
  c.timing.repetitions_max = 0;
  SdServer s2(c, rnd);
  s2.start(kT0);
  sent = run(s2, kT0, kT0 + ms(2600), ev);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].at, t0 + ms(1000));
  EXPECT_EQ(sent[2].at, t0 + ms(2000));
}

SdRxContext rx(TimePoint now, bool multicast = true, bool unicast_flag = true) {
  return SdRxContext{now, kClientSd, multicast, unicast_flag};
}

TEST(SdServer, AnswersFindsPerPhase) {
  SdServerConfig c = config();
  c.timing.initial_delay_min = ms(100);
  c.timing.initial_delay_max = ms(100);
  c.timing.repetitions_base_delay = ms(100);
  c.timing.repetitions_max = 1;
  FixedRandom rnd(ms(0));
  SdServer s(c, rnd);
  const SdEntry find = SdEntry::find_service(0x1234, 0xFFFF, 0xFF, 0xFFFFFFFF, 3);
  SdEntryOptions none;
  SdOutput out;
  s.on_entry(rx(kT0), find, none, out);  // Down: ignored
  s.start(kT0);
  s.on_entry(rx(kT0 + ms(10)), find, none, out);  // InitialWait: ignored
  EXPECT_TRUE(out.sends.empty());
  run(s, kT0, kT0 + ms(100), out);  // first offer at 100 -> Repetition
  ASSERT_EQ(s.state(), SdServer::State::kRepetition);
  out.clear();
  s.on_entry(rx(kT0 + ms(150)), find, none, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_FALSE(out.sends[0].multicast);
  EXPECT_EQ(out.sends[0].destination, kClientSd);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kOfferService);
  // To main: offers at 200 (repetition), 400 (main entry), 1400, ...
  run(s, kT0 + ms(150), kT0 + ms(400), out);
  ASSERT_EQ(s.state(), SdServer::State::kMain);
  out.clear();
  // Main, last multicast offer 100 ms ago (< 500): unicast answer.
  s.on_entry(rx(kT0 + ms(500)), find, none, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_FALSE(out.sends[0].multicast);
  out.clear();
  // 700 ms after the last offer: multicast answer.
  s.on_entry(rx(kT0 + ms(1100)), find, none, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_TRUE(out.sends[0].multicast);
  out.clear();
  // Without the unicast flag: multicast answer.
  s.on_entry(rx(kT0 + ms(1150), true, false), find, none, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_TRUE(out.sends[0].multicast);
  out.clear();
  // A find for another instance or major version does not match.
  EXPECT_FALSE(s.matches(SdEntry::find_service(0x1234, 2, 0xFF, 0xFFFFFFFF, 3)));
  EXPECT_FALSE(s.matches(SdEntry::find_service(0x1234, 1, 2, 0xFFFFFFFF, 3)));
  EXPECT_TRUE(s.matches(SdEntry::find_service(0x1234, 1, 1, 0, 3)));
  // Stop: StopOffer with TTL 0 by multicast.
  s.stop(kT0 + ms(1200), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_TRUE(out.sends[0].multicast);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kStopOfferService);
  EXPECT_EQ(s.state(), SdServer::State::kDown);
  EXPECT_EQ(s.next_deadline(), TimePoint::max());
}

SdServer started_server(RandomSource& rnd, SdServerConfig c = config()) {
  c.timing.initial_delay_min = ms(0);
  c.timing.initial_delay_max = ms(0);
  SdServer s(c, rnd);
  s.start(kT0);
  SdOutput out;
  s.on_timer(kT0, out);  // first offer
  return s;
}

SdEntryOptions subscriber_opts() {
  SdEntryOptions o;
  o.items[0] = SdOption::ipv4_endpoint(kClientUdp.address, L4Proto::kUdp, kClientUdp.port);
  o.count = 1;
  return o;
}

TEST(SdServer, SubscriptionAckRenewExpireStop) {
  FixedRandom rnd(ms(0));
  SdServer s = started_server(rnd);
  ASSERT_EQ(s.state(), SdServer::State::kRepetition);
  SdOutput out;
  const SdEntry sub = SdEntry::subscribe(0x1234, 1, 1, 0x10, 3, 0);
  s.on_entry(rx(kT0 + ms(1), false), sub, subscriber_opts(), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupAck);
  EXPECT_EQ(out.sends[0].entry.ttl, 3u);
  EXPECT_EQ(out.sends[0].destination, kClientSd);
  EXPECT_TRUE(out.sends[0].run1.empty());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kSubscribed);
  EXPECT_EQ(out.events[0].udp, kClientUdp);
  ASSERT_EQ(s.subscriptions().size(), 1u);
  out.clear();
  // Renewal at 2 s: Ack again, no new event, expiry moved to 5 s.
  s.on_entry(rx(kT0 + ms(2000), false), sub, subscriber_opts(), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(s.subscriptions()[0].expiry, kT0 + ms(5000));
  out.clear();
  s.on_timer(kT0 + ms(4999), out);
  EXPECT_EQ(s.subscriptions().size(), 1u);
  out.clear();
  s.on_timer(kT0 + ms(5000), out);
  EXPECT_TRUE(s.subscriptions().empty());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kSubscriptionExpired);
  out.clear();
  // Multicast eventgroup: Ack carries the multicast option.
  const SdEntry sub20 = SdEntry::subscribe(0x1234, 1, 1, 0x20, kTtlInfinite, 1);
  s.on_entry(rx(kT0 + ms(6000), false), sub20, subscriber_opts(), out);
  ASSERT_EQ(out.sends.size(), 1u);
  ASSERT_EQ(out.sends[0].run1.size(), 1u);
  EXPECT_EQ(out.sends[0].run1[0].type, 0x14);
  EXPECT_EQ(out.sends[0].entry.counter, 1);
  EXPECT_EQ(s.subscriptions()[0].expiry, TimePoint::max());
  out.clear();
  // StopSubscribe removes it without an answer.
  const SdEntry stop20 = SdEntry::subscribe(0x1234, 1, 1, 0x20, 0, 1);
  s.on_entry(rx(kT0 + ms(6100), false), stop20, subscriber_opts(), out);
  EXPECT_TRUE(out.sends.empty());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kUnsubscribed);
  EXPECT_TRUE(s.subscriptions().empty());
}

TEST(SdServer, Nacks) {
  FixedRandom rnd(ms(0));
  SdOutput out;
  SdEntryOptions none;
  {  // not offered yet (initial wait)
    SdServerConfig c = config();
    c.timing.initial_delay_min = ms(100);
    SdServer s(c, rnd);
    s.start(kT0);
    s.on_entry(rx(kT0, false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), subscriber_opts(), out);
    ASSERT_EQ(out.sends.size(), 1u);
    EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupNack);
    EXPECT_EQ(s.drops()[SdDropReason::kSubscribeNotOffered], 1u);
    out.clear();
  }
  SdServerConfig c = config();
  c.max_subscribers = 1;
  SdServer s = started_server(rnd, c);
  // unknown eventgroup
  s.on_entry(rx(kT0, false), SdEntry::subscribe(0x1234, 1, 1, 0x99, 3), subscriber_opts(), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupNack);
  EXPECT_EQ(out.sends[0].entry.eventgroup_id, 0x99);
  EXPECT_EQ(s.drops()[SdDropReason::kSubscribeUnknownEventgroup], 1u);
  out.clear();
  // no endpoint option for a unicast-only eventgroup
  s.on_entry(rx(kT0, false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), none, out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupNack);
  EXPECT_EQ(s.drops()[SdDropReason::kSubscribeNoEndpoint], 1u);
  out.clear();
  // table full
  s.on_entry(rx(kT0, false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), subscriber_opts(), out);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupAck);
  out.clear();
  SdEntryOptions other;  // another port of the same subscriber host
  other.items[0] = SdOption::ipv4_endpoint(kClientUdp.address, L4Proto::kUdp, 1);
  other.count = 1;
  s.on_entry(rx(kT0, false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), other, out);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupNack);
  EXPECT_EQ(s.drops()[SdDropReason::kSubscribeTableFull], 1u);
  EXPECT_EQ(out.drops[SdDropReason::kSubscribeTableFull], 1u);
  EXPECT_EQ(s.drops().total(), 3u);
  out.clear();
  // Peer reboot drops the subscriber's entries.
  s.on_peer_reboot(kClientSd, out);
  EXPECT_TRUE(s.subscriptions().empty());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kUnsubscribed);
}

// ---- binding entries to their sender (issue 13 item 6) ----------------------

const Endpoint kVictimUdp{IpAddress::v4(10, 0, 0, 3), 40001, L4Proto::kUdp};
const Endpoint kAttackerSd{IpAddress::v4(10, 0, 0, 9), 30490, L4Proto::kUdp};
const Endpoint kAttackerUdp{IpAddress::v4(10, 0, 0, 9), 40001, L4Proto::kUdp};

SdRxContext rx_from(TimePoint now, const Endpoint& source) { return SdRxContext{now, source, false, true}; }

std::size_t nacks(const SdOutput& out) {
  std::size_t n = 0;
  for (const auto& o : out.sends) n += o.entry.kind() == EntryKind::kSubscribeEventgroupNack ? 1 : 0;
  return n;
}

TEST(SdServerBinding, SubscribeNamingAnotherHostIsNacked) {
  // The attack: a Subscribe from one host naming a victim's endpoint, so
  // that the server reflects its event stream at the victim.
  FixedRandom rnd(ms(0));
  SdServer s = started_server(rnd);
  SdOutput out;
  s.on_entry(rx_from(kT0 + ms(1), kAttackerSd), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), endpoint_opts(kVictimUdp),
             out);
  // From a legitimate subscriber host, naming another host's endpoint: refused too.
  s.on_entry(rx(kT0 + ms(2), false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3), endpoint_opts(kVictimUdp), out);
  // A multicast eventgroup does not change that: the unicast endpoint still names a victim.
  s.on_entry(rx_from(kT0 + ms(3), kAttackerSd), SdEntry::subscribe(0x1234, 1, 1, 0x20, 3), endpoint_opts(kVictimUdp),
             out);
  EXPECT_TRUE(s.subscriptions().empty());
  EXPECT_TRUE(out.events.empty());
  ASSERT_EQ(out.sends.size(), 3u);
  EXPECT_EQ(nacks(out), 3u);
  EXPECT_EQ(out.sends[0].destination, kAttackerSd);  // the Nack goes to the sender, not the victim
  EXPECT_EQ(s.drops()[SdDropReason::kSubscribeEndpointNotSource], 3u);
  EXPECT_EQ(s.drops().total(), 3u);
  // The attacker's own endpoint is fine (no allowlist here).
  out.clear();
  s.on_entry(rx_from(kT0 + ms(4), kAttackerSd), SdEntry::subscribe(0x1234, 1, 1, 0x10, 3),
             endpoint_opts(kAttackerUdp), out);
  ASSERT_EQ(s.subscriptions().size(), 1u);
  EXPECT_EQ(s.subscriptions()[0].udp, kAttackerUdp);
}

TEST(SdServerBinding, StopSubscribeRemovesOnlyTheSendersSubscription) {
  FixedRandom rnd(ms(0));
  SdServer s = started_server(rnd);
  SdOutput out;
  const SdEntry sub = SdEntry::subscribe(0x1234, 1, 1, 0x10, kTtlInfinite);
  const SdEntry stop = SdEntry::subscribe(0x1234, 1, 1, 0x10, 0);
  s.on_entry(rx(kT0, false), sub, subscriber_opts(), out);
  ASSERT_EQ(s.subscriptions().size(), 1u);
  out.clear();
  // A third host naming the subscriber's endpoint (a replayed or relabelled StopSubscribe).
  s.on_entry(rx_from(kT0 + ms(1), kAttackerSd), stop, subscriber_opts(), out);
  EXPECT_EQ(s.drops()[SdDropReason::kStopSubscribeEndpointNotSource], 1u);
  // A third host naming its own endpoint: it has no subscription to stop.
  s.on_entry(rx_from(kT0 + ms(2), kAttackerSd), stop, endpoint_opts(kAttackerUdp), out);
  // The subscriber's address from another SD port is another SD peer.
  s.on_entry(rx_from(kT0 + ms(3), Endpoint{kClientSd.address, 30491, L4Proto::kUdp}), stop, subscriber_opts(), out);
  // Same sender, another counter or another endpoint: another subscription.
  s.on_entry(rx(kT0 + ms(4), false), SdEntry::subscribe(0x1234, 1, 1, 0x10, 0, 3), subscriber_opts(), out);
  s.on_entry(rx(kT0 + ms(5), false), stop, endpoint_opts(Endpoint{kClientUdp.address, 1, L4Proto::kUdp}), out);
  EXPECT_EQ(s.drops()[SdDropReason::kStopSubscribeUnknown], 4u);
  EXPECT_EQ(s.drops().total(), 5u);
  ASSERT_EQ(s.subscriptions().size(), 1u);
  EXPECT_TRUE(out.events.empty());
  EXPECT_TRUE(out.sends.empty());  // never an answer to a StopSubscribe
  // The subscriber's own StopSubscribe.
  s.on_entry(rx(kT0 + ms(6), false), stop, subscriber_opts(), out);
  EXPECT_TRUE(s.subscriptions().empty());
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].kind, SdEventKind::kUnsubscribed);
}

TEST(SdServerBinding, AllowedSubscribersAreTheOnlyOnesAcked) {
  SdServerConfig c = config();
  c.eventgroups[0].allowed_subscribers = {kClientSd.address, IpAddress::v4(10, 0, 0, 4)};
  FixedRandom rnd(ms(0));
  SdServer s = started_server(rnd, c);
  SdOutput out;
  const SdEntry sub = SdEntry::subscribe(0x1234, 1, 1, 0x10, 3);
  s.on_entry(rx_from(kT0 + ms(1), kAttackerSd), sub, endpoint_opts(kAttackerUdp), out);
  ASSERT_EQ(out.sends.size(), 1u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupNack);
  EXPECT_EQ(out.sends[0].destination, kAttackerSd);
  EXPECT_TRUE(s.subscriptions().empty());
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(s.drops()[SdDropReason::kSubscriberNotAllowed], 1u);
  EXPECT_EQ(out.drops[SdDropReason::kSubscriberNotAllowed], 1u);
  out.clear();
  // A listed host is acked; the unrestricted eventgroup 0x20 takes anyone.
  s.on_entry(rx(kT0 + ms(2), false), sub, subscriber_opts(), out);
  s.on_entry(rx_from(kT0 + ms(3), kAttackerSd), SdEntry::subscribe(0x1234, 1, 1, 0x20, 3),
             endpoint_opts(kAttackerUdp), out);
  ASSERT_EQ(out.sends.size(), 2u);
  EXPECT_EQ(out.sends[0].entry.kind(), EntryKind::kSubscribeEventgroupAck);
  EXPECT_EQ(out.sends[1].entry.kind(), EntryKind::kSubscribeEventgroupAck);
  EXPECT_EQ(s.subscriptions().size(), 2u);
  EXPECT_EQ(s.drops().total(), 1u);
}

TEST(SdServer, RequestResponseDelayForMulticastFinds) {
  SdServerConfig c = config();
  c.timing.request_response_delay_min = ms(20);
  c.timing.request_response_delay_max = ms(40);
  FixedRandom rnd(ms(5));
  SdServer s = started_server(rnd, c);
  SdOutput out;
  SdEntryOptions none;
  const SdEntry find = SdEntry::find_service(0x1234, 1, 1, 0, 3);
  s.on_entry(rx(kT0 + ms(2), true), find, none, out);
  EXPECT_TRUE(out.sends.empty());
  auto unicast_sends = [&]() {
    std::size_t n = 0;
    for (const auto& o : out.sends) n += o.multicast ? 0 : 1;
    return n;
  };
  s.on_timer(kT0 + ms(26), out);
  EXPECT_EQ(unicast_sends(), 0u);
  s.on_timer(kT0 + ms(27), out);  // 2 ms + 20 ms min + 5 ms from the random source
  EXPECT_EQ(unicast_sends(), 1u);
  out.clear();
  // Unicast-received finds are answered at once.
  s.on_entry(rx(kT0 + ms(30), false), find, none, out);
  EXPECT_EQ(out.sends.size(), 1u);
}

}  // namespace
}  // namespace layersec::someip
