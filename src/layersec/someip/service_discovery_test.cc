#include "layersec/someip/service_discovery.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace layersec::someip {
namespace {

constexpr auto ms = Duration::milliseconds;
const Endpoint kGroup{IpAddress::v4(224, 224, 224, 245), 30490, L4Proto::kUdp};
const Endpoint kSdA{IpAddress::v4(10, 0, 0, 1), 30490, L4Proto::kUdp};
const Endpoint kSdB{IpAddress::v4(10, 0, 0, 2), 30490, L4Proto::kUdp};

SdTiming fast() {
  SdTiming t;
  t.initial_delay_min = ms(10);
  t.initial_delay_max = ms(50);
  t.repetitions_base_delay = ms(20);
  t.repetitions_max = 2;
  t.cyclic_offer_delay = ms(500);
  t.ttl = 2;
  return t;
}

struct Node {
  std::unique_ptr<ServiceDiscovery> sd;
  Endpoint local;
  std::vector<SdEvent> events;
};

// A two-node discrete-event loop: datagrams are delivered instantly, multicast
// to every other node, unicast to the node owning the destination.
class Sim {
 public:
  explicit Sim(std::vector<Node*> nodes) : nodes_(std::move(nodes)) {}
  void deliver(Node& from, SdActions& a, TimePoint now) {
    for (auto& e : a.events) from.events.push_back(e);
    a.events.clear();
    auto datagrams = std::move(a.datagrams);
    a.datagrams.clear();
    for (auto& d : datagrams) {
      if (partitioned_) continue;  // the link is down: everything is lost
      // Every datagram is a valid SD message with the expected session flags.
      auto m = parse_message(d.bytes);
      EXPECT_TRUE(m.ok());
      if (!m) continue;
      auto v = parse_sd_message(*m);
      EXPECT_TRUE(v.ok());
      if (!v) continue;
      EXPECT_TRUE(v->unicast());
      EXPECT_NE(m->header.session_id, 0);
      ++sent_;
      for (Node* n : nodes_) {
        if (n == &from) continue;
        if (!d.multicast && !(d.destination == n->local)) continue;
        SdActions out;
        n->sd->on_datagram(now, d.bytes, from.local, d.multicast, out);
        deliver(*n, out, now);
      }
    }
  }
  void run_until(TimePoint end) {
    while (true) {
      TimePoint t = TimePoint::max();
      for (Node* n : nodes_) t = std::min(t, n->sd->next_deadline());
      if (t > end) break;
      now_ = t;
      for (Node* n : nodes_) {
        if (n->sd->next_deadline() > now_) continue;
        SdActions out;
        n->sd->on_timer(now_, out);
        deliver(*n, out, now_);
      }
    }
    now_ = end;
  }
  TimePoint now_ = TimePoint::from_ns(0);
  int sent_ = 0;
  bool partitioned_ = false;

 private:
  std::vector<Node*> nodes_;
};

std::size_t count(const std::vector<SdEvent>& ev, SdEventKind k) {
  std::size_t n = 0;
  for (const auto& e : ev) n += e.kind == k ? 1 : 0;
  return n;
}

void make_server(Node& a, RandomSource& rnd, TimePoint start, std::vector<IpAddress> subscribers = {}) {
  a.local = kSdA;
  a.sd = std::make_unique<ServiceDiscovery>(SdConfig{kSdA, kGroup}, rnd);
  SdServerConfig sc;
  sc.service_id = 0x1234;
  sc.instance_id = 1;
  sc.timing = fast();
  sc.udp_endpoint = Endpoint{kSdA.address, 30509, L4Proto::kUdp};
  sc.eventgroups.push_back({0x10, std::nullopt, std::move(subscribers)});
  auto& server = a.sd->add_server(sc);
  a.sd->start_offer(start, server);
}

TEST(ServiceDiscovery, OfferFindSubscribeAckAcrossTwoNodes) {
  SeededRandom rnd(7);
  Node a, b;
  make_server(a, rnd, TimePoint::from_ns(0));
  b.local = kSdB;
  b.sd = std::make_unique<ServiceDiscovery>(SdConfig{kSdB, kGroup}, rnd);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.timing = fast();
  cc.udp_endpoint = Endpoint{kSdB.address, 40001, L4Proto::kUdp};
  cc.eventgroups = {0x10};
  auto& client = b.sd->add_client(cc);
  Sim sim({&a, &b});
  SdActions out;
  b.sd->request(sim.now_, client, out);
  sim.deliver(b, out, sim.now_);

  sim.run_until(TimePoint::from_ns(0) + ms(3000));
  EXPECT_EQ(count(b.events, SdEventKind::kServiceAvailable), 1u);
  EXPECT_EQ(count(b.events, SdEventKind::kSubscriptionAcked), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscribed), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscriptionExpired), 0u);  // renewed by each offer
  EXPECT_TRUE(client.available());
  EXPECT_EQ(client.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  EXPECT_EQ(client.offer()->udp->port, 30509);
  EXPECT_GT(sim.sent_, 5);

  // Server restarts (fresh session counters with the reboot flag): the
  // client detects the reboot, drops the service and subscribes again.
  make_server(a, rnd, sim.now_);
  a.events.clear();
  b.events.clear();
  sim.run_until(sim.now_ + ms(3000));
  EXPECT_GE(count(b.events, SdEventKind::kPeerRebooted), 1u);
  EXPECT_GE(count(b.events, SdEventKind::kServiceUnavailable), 1u);
  EXPECT_EQ(count(b.events, SdEventKind::kServiceAvailable), count(b.events, SdEventKind::kServiceUnavailable));
  EXPECT_GE(count(a.events, SdEventKind::kSubscribed), 1u);
  EXPECT_EQ(client.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  EXPECT_GE(b.sd->counters().reboots, 1u);
}

// ---- binding entries to their sender (issue 13 item 6) ----------------------

const Endpoint kSdC{IpAddress::v4(10, 0, 0, 9), 30490, L4Proto::kUdp};  // a third host

SdClient& make_client(Node& b, RandomSource& rnd, std::vector<IpAddress> servers = {}) {
  b.local = kSdB;
  b.sd = std::make_unique<ServiceDiscovery>(SdConfig{kSdB, kGroup}, rnd);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.timing = fast();
  cc.udp_endpoint = Endpoint{kSdB.address, 40001, L4Proto::kUdp};
  cc.eventgroups = {0x10};
  cc.allowed_servers = std::move(servers);
  return b.sd->add_client(cc);
}

// One SD message with one entry, as a third host would put it on the wire.
std::vector<std::uint8_t> sd_datagram(const SdEntry& e, const Endpoint& named, std::uint16_t session) {
  SdMessageBuilder b;
  const SdOption opt = endpoint_option(named);
  EXPECT_TRUE(b.add(e, std::span<const SdOption>(&opt, 1)));
  std::vector<std::uint8_t> bytes(kHeaderSize + b.payload_size());
  ByteWriter w(bytes);
  EXPECT_TRUE(b.write_message(w, session, kSdFlagReboot | kSdFlagUnicast));
  return bytes;
}

std::uint64_t dropped(const ServiceDiscovery& sd, SdDropReason r) { return sd.counters().dropped[r]; }

TEST(ServiceDiscoveryBinding, EntriesFromAThirdHostChangeNothing) {
  SeededRandom rnd(21);
  Node a, b;
  make_server(a, rnd, TimePoint::from_ns(0));
  SdClient& client = make_client(b, rnd);
  Sim sim({&a, &b});
  SdActions out;
  b.sd->request(sim.now_, client, out);
  sim.deliver(b, out, sim.now_);
  sim.run_until(TimePoint::from_ns(0) + ms(2000));
  ASSERT_EQ(client.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  ASSERT_EQ(a.sd->counters().dropped.total(), 0u);
  ASSERT_EQ(b.sd->counters().dropped.total(), 0u);
  const Endpoint server_udp{kSdA.address, 30509, L4Proto::kUdp};
  const Endpoint client_udp{kSdB.address, 40001, L4Proto::kUdp};
  const TimePoint t = sim.now_;
  // To the client: the server's offer and a StopOffer re-sent from C, and a Nack.
  std::uint16_t session = 1;
  SdActions ignored;
  b.sd->on_datagram(t, sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 2), server_udp, session++), kSdC, true,
                    ignored);
  b.sd->on_datagram(t, sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 0), server_udp, session++), kSdC, true,
                    ignored);
  b.sd->on_datagram(t, sd_datagram(SdEntry::subscribe_ack(0x1234, 1, 1, 0x10, 0), client_udp, session++), kSdC,
                    false, ignored);
  EXPECT_TRUE(ignored.datagrams.empty());
  EXPECT_TRUE(ignored.events.empty());
  EXPECT_EQ(dropped(*b.sd, SdDropReason::kOfferEndpointNotSource), 1u);
  EXPECT_EQ(dropped(*b.sd, SdDropReason::kStopOfferNotFromOfferer), 1u);
  EXPECT_EQ(dropped(*b.sd, SdDropReason::kAckNotFromServer), 1u);
  EXPECT_EQ(b.sd->counters().dropped.total(), 3u);
  EXPECT_EQ(client.drops().total(), 3u);
  // To the server: a StopSubscribe and a Subscribe naming the client's endpoint.
  a.sd->on_datagram(t, sd_datagram(SdEntry::subscribe(0x1234, 1, 1, 0x10, 0), client_udp, session++), kSdC, false,
                    ignored);
  EXPECT_TRUE(ignored.datagrams.empty());  // no answer to a StopSubscribe
  a.sd->on_datagram(t, sd_datagram(SdEntry::subscribe(0x1234, 1, 1, 0x10, 2), client_udp, session++), kSdC, false,
                    ignored);
  ASSERT_EQ(ignored.datagrams.size(), 1u);  // the Nack, to C
  EXPECT_EQ(ignored.datagrams[0].destination, kSdC);
  auto m = parse_message(ignored.datagrams[0].bytes);
  ASSERT_TRUE(m.ok());
  auto v = parse_sd_message(*m);
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->entry_count(), 1u);
  EXPECT_EQ(v->entry(0).kind(), EntryKind::kSubscribeEventgroupNack);
  EXPECT_TRUE(ignored.events.empty());
  EXPECT_EQ(dropped(*a.sd, SdDropReason::kStopSubscribeEndpointNotSource), 1u);
  EXPECT_EQ(dropped(*a.sd, SdDropReason::kSubscribeEndpointNotSource), 1u);
  EXPECT_EQ(a.sd->counters().dropped.total(), 2u);
  // Nothing changed: no loss, no new subscription, and it stays that way.
  a.events.clear();
  b.events.clear();
  sim.run_until(t + ms(2000));
  EXPECT_EQ(count(b.events, SdEventKind::kServiceUnavailable), 0u);
  EXPECT_EQ(count(a.events, SdEventKind::kUnsubscribed), 0u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscribed), 0u);
  EXPECT_EQ(client.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  EXPECT_EQ(client.offer()->peer, kSdA);
}

TEST(ServiceDiscoveryBinding, PinnedServerAndAllowedSubscriberSurviveReboots) {
  // Reboot detection (feat_req_someipsd_764) still works with both lists set:
  // the server restarts, then the client restarts.
  SeededRandom rnd(23);
  Node a, b;
  make_server(a, rnd, TimePoint::from_ns(0), {kSdB.address});
  SdClient* client = &make_client(b, rnd, {kSdA.address});
  Sim sim({&a, &b});
  SdActions out;
  b.sd->request(sim.now_, *client, out);
  sim.deliver(b, out, sim.now_);
  sim.run_until(TimePoint::from_ns(0) + ms(2000));
  ASSERT_EQ(client->subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  make_server(a, rnd, sim.now_, {kSdB.address});
  a.events.clear();
  b.events.clear();
  sim.run_until(sim.now_ + ms(2000));
  EXPECT_GE(count(b.events, SdEventKind::kPeerRebooted), 1u);
  EXPECT_GE(count(b.events, SdEventKind::kServiceUnavailable), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscribed), 1u);
  EXPECT_EQ(client->subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  // The client restarts: the server sees the reboot, drops the old
  // subscription and acks the new one.
  client = &make_client(b, rnd, {kSdA.address});
  a.events.clear();
  b.sd->request(sim.now_, *client, out);
  sim.deliver(b, out, sim.now_);
  sim.run_until(sim.now_ + ms(2000));
  EXPECT_GE(count(a.events, SdEventKind::kPeerRebooted), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kUnsubscribed), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscribed), 1u);
  EXPECT_EQ(client->subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  EXPECT_EQ(a.sd->counters().dropped.total(), 0u);
  EXPECT_EQ(b.sd->counters().dropped.total(), 0u);
}

TEST(ServiceDiscovery, PartitionExpiresOfferAndSubscriptionByTtl) {
  SeededRandom rnd(11);
  Node a, b;
  make_server(a, rnd, TimePoint::from_ns(0));
  b.local = kSdB;
  b.sd = std::make_unique<ServiceDiscovery>(SdConfig{kSdB, kGroup}, rnd);
  SdClientConfig cc;
  cc.service_id = 0x1234;
  cc.timing = fast();  // TTL 2 s, cyclic offers every 500 ms
  cc.udp_endpoint = Endpoint{kSdB.address, 40001, L4Proto::kUdp};
  cc.eventgroups = {0x10};
  auto& client = b.sd->add_client(cc);
  Sim sim({&a, &b});
  SdActions out;
  b.sd->request(sim.now_, client, out);
  sim.deliver(b, out, sim.now_);
  sim.run_until(TimePoint::from_ns(0) + ms(2000));
  ASSERT_TRUE(client.available());
  ASSERT_EQ(count(a.events, SdEventKind::kSubscribed), 1u);
  // Cut the link: no StopOffer, no StopSubscribe; only TTLs end the state.
  sim.partitioned_ = true;
  const TimePoint cut = sim.now_;
  sim.run_until(cut + ms(1400));
  EXPECT_TRUE(client.available());  // the last offer (at most 500 ms before the cut) lives 2 s
  sim.run_until(cut + ms(2600));
  EXPECT_FALSE(client.available());
  EXPECT_EQ(count(b.events, SdEventKind::kServiceUnavailable), 1u);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscriptionExpired), 1u);
  // Link back: the next cyclic offer restores service and subscription.
  sim.partitioned_ = false;
  sim.run_until(cut + ms(4000));
  EXPECT_TRUE(client.available());
  EXPECT_EQ(client.subscription_state(0x10), SdClient::SubscriptionState::kAcked);
  EXPECT_EQ(count(a.events, SdEventKind::kSubscribed), 2u);
}

TEST(ServiceDiscovery, DropsGarbageAndOwnMessages) {
  SeededRandom rnd(1);
  ServiceDiscovery sd(SdConfig{kSdA, kGroup}, rnd);
  SdActions out;
  const std::uint8_t junk[] = {1, 2, 3};
  sd.on_datagram(TimePoint::from_ns(0), junk, kSdB, true, out);
  EXPECT_EQ(sd.counters().rejected, 1u);
  sd.on_datagram(TimePoint::from_ns(0), junk, kSdA, true, out);
  EXPECT_EQ(sd.counters().own, 1u);
  EXPECT_TRUE(out.datagrams.empty());
  EXPECT_TRUE(out.events.empty());
}

TEST(ServiceDiscovery, PacksEntriesPerDestinationWithinMtu) {
  SeededRandom rnd(3);
  ServiceDiscovery sd(SdConfig{kSdA, kGroup, 200}, rnd);
  SdTiming t = fast();
  t.initial_delay_min = ms(10);
  t.initial_delay_max = ms(10);
  for (std::uint16_t i = 1; i <= 20; ++i) {
    SdServerConfig sc;
    sc.service_id = static_cast<std::uint16_t>(0x100 + i);
    sc.timing = t;
    sc.udp_endpoint = Endpoint{kSdA.address, static_cast<std::uint16_t>(30000 + i), L4Proto::kUdp};
    sd.start_offer(TimePoint::from_ns(0), sd.add_server(sc));
  }
  SdActions out;
  sd.on_timer(TimePoint::from_ns(0) + ms(10), out);
  std::size_t entries = 0;
  std::uint16_t last_session = 0;
  for (const auto& d : out.datagrams) {
    EXPECT_TRUE(d.multicast);
    EXPECT_LE(d.bytes.size(), 16u + 200u);
    auto m = parse_message(d.bytes);
    ASSERT_TRUE(m.ok());
    auto v = parse_sd_message(*m);
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->reboot());
    EXPECT_EQ(m->header.session_id, last_session + 1);  // multicast relation counter
    last_session = m->header.session_id;
    entries += v->entry_count();
  }
  EXPECT_EQ(entries, 20u);
  EXPECT_GT(out.datagrams.size(), 1u);
}

// Every datagram is counted as own, rejected (by reason) or accepted, and
// every entry of an accepted one that no machine takes is counted too.
TEST(ServiceDiscovery, IgnoredDatagramsAndEntriesAreCountedByReason) {
  SeededRandom rnd(5);
  Node b;
  make_client(b, rnd);
  SdActions out;
  const TimePoint t = TimePoint::from_ns(1'000'000);
  const auto& c = b.sd->counters();
  const Endpoint server_ep{kSdA.address, 30509, L4Proto::kUdp};
  std::uint16_t session = 1;
  const auto feed = [&](const std::vector<std::uint8_t>& bytes, const Endpoint& from) {
    b.sd->on_datagram(t, bytes, from, true, out);
  };
  const auto invalid = [&](SdError e) { return c.invalid_sd[static_cast<std::size_t>(e)]; };

  feed(sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 3), server_ep, session++), kSdB);  // looped back
  EXPECT_EQ(c.own, 1u);
  feed({0x01, 0x02, 0x03}, kSdA);
  EXPECT_EQ(c.not_someip, 1u);
  auto not_sd = sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 3), server_ep, session++);
  not_sd[0] = 0x12;  // Message ID of a service, not SD's 0xFFFF8100
  feed(not_sd, kSdA);
  EXPECT_EQ(invalid(SdError::kNotSdHeader), 1u);
  auto bad_entries = sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 3), server_ep, session++);
  ASSERT_EQ(bad_entries[23], 0x10);  // one entry: entries length 16
  bad_entries[23] = 0x11;
  feed(bad_entries, kSdA);
  EXPECT_EQ(invalid(SdError::kEntriesLengthInvalid), 1u);
  EXPECT_EQ(c.rejected, 3u);

  SdEntry unknown = SdEntry::offer_service(0x1234, 1, 1, 0, 3);
  unknown.type = 0x03;  // no such entry type
  feed(sd_datagram(unknown, server_ep, session++), kSdA);
  EXPECT_EQ(c.unknown_entries, 1u);
  feed(sd_datagram(SdEntry::offer_service(0x9999, 1, 1, 0, 3), server_ep, session++), kSdA);  // not ours
  EXPECT_EQ(c.unmatched_entries, 1u);
  feed(sd_datagram(SdEntry::offer_service(0x1234, 1, 1, 0, 3), server_ep, session++), kSdA);  // ours: taken
  EXPECT_EQ(c.unmatched_entries, 1u);
  EXPECT_EQ(c.unknown_entries, 1u);
  EXPECT_EQ(c.received, 7u);
  EXPECT_EQ(c.own + c.rejected, 4u);
  EXPECT_EQ(c.dropped.total(), 0u);
  EXPECT_EQ(c.unsent_entries + c.unsent_datagrams, 0u);
}

}  // namespace
}  // namespace layersec::someip
