// EventPublisher on its own: where one notification goes for a given set of
// subscriptions (distinct unicast subscribers, the multicast threshold,
// multicast from the first subscriber), subscriber counts, and the event
// state (field values, session counters).
#include "layersec/someip/event_publisher.h"

#include <gtest/gtest.h>

namespace layersec::someip {
namespace {

constexpr std::uint16_t kGroupA = 0x10, kGroupB = 0x20, kEvent = 0x8001, kField = 0x8002;
const Endpoint kMulticast{IpAddress::v4(239, 1, 1, 1), 30600, L4Proto::kUdp};

Endpoint ep(std::uint8_t host, std::uint16_t port = 30501) {
  return Endpoint{IpAddress::v4(10, 0, 0, host), port, L4Proto::kUdp};
}

SdSubscription sub(std::uint16_t group, std::uint8_t host, bool with_udp = true) {
  SdSubscription s;
  s.eventgroup_id = group;
  s.peer = ep(host, kSdPort);
  if (with_udp) s.udp = ep(host);
  return s;
}

ServiceConfig service(std::optional<Endpoint> multicast, std::size_t threshold) {
  ServiceConfig s;
  s.service_id = 0x1234;
  s.udp_port = 30509;
  s.events = {EventConfig{kEvent, {kGroupA, kGroupB}, false, std::nullopt, std::nullopt},
              EventConfig{kField, {kGroupB}, true, std::nullopt, std::nullopt}};
  s.eventgroups = {EventgroupConfig{kGroupA, multicast, threshold}, EventgroupConfig{kGroupB, std::nullopt, 1}};
  return s;
}

std::vector<Endpoint> dests(const ServiceConfig& s, std::uint16_t event, const std::vector<SdSubscription>& subs) {
  std::vector<Endpoint> out{ep(99)};  // stale content is cleared
  for (const auto& e : s.events)
    if (e.event_id == event) EventPublisher::destinations(s, e, subs, out);
  return out;
}

TEST(EventPublisherTest, UnicastToEachDistinctSubscriberOnce) {
  const ServiceConfig s = service(std::nullopt, 1);
  // Host 3 subscribed to both groups of the event, host 2 twice to A; one
  // subscription without a UDP endpoint gets nothing.
  const std::vector<SdSubscription> subs{sub(kGroupA, 3), sub(kGroupA, 2), sub(kGroupA, 2), sub(kGroupB, 3),
                                         sub(kGroupB, 4, false)};
  EXPECT_EQ(dests(s, kEvent, subs), (std::vector<Endpoint>{ep(2), ep(3)}));
  EXPECT_EQ(dests(s, kField, subs), (std::vector<Endpoint>{ep(3)}));
  EXPECT_TRUE(dests(s, kEvent, {}).empty());
}

TEST(EventPublisherTest, MulticastAtTheThreshold) {
  const ServiceConfig s = service(kMulticast, 3);
  std::vector<SdSubscription> subs{sub(kGroupA, 2), sub(kGroupA, 3)};
  EXPECT_EQ(dests(s, kEvent, subs), (std::vector<Endpoint>{ep(2), ep(3)}));  // 2 < 3: unicast
  subs.push_back(sub(kGroupA, 4));
  EXPECT_EQ(dests(s, kEvent, subs), (std::vector<Endpoint>{kMulticast}));
  // Another group of the same event still goes by unicast.
  subs.push_back(sub(kGroupB, 5));
  EXPECT_EQ(dests(s, kEvent, subs), (std::vector<Endpoint>{ep(5), kMulticast}));
}

TEST(EventPublisherTest, ThresholdZeroAndOneMulticastFromTheFirstSubscriber) {
  for (std::size_t threshold : {0u, 1u}) {
    const ServiceConfig s = service(kMulticast, threshold);
    EXPECT_TRUE(dests(s, kEvent, {}).empty());
    EXPECT_TRUE(dests(s, kEvent, {sub(kGroupA, 2, false)}).empty());  // no UDP endpoint: nobody to reach
    EXPECT_EQ(dests(s, kEvent, {sub(kGroupA, 2)}), (std::vector<Endpoint>{kMulticast}));
  }
  EXPECT_TRUE(EventPublisher::has_multicast(service(kMulticast, 1), service(kMulticast, 1).events[0]));
  EXPECT_FALSE(EventPublisher::has_multicast(service(kMulticast, 1), service(kMulticast, 1).events[1]));
}

TEST(EventPublisherTest, SubscriberCountIsDistinctEndpoints) {
  const std::vector<SdSubscription> subs{sub(kGroupA, 2), sub(kGroupA, 2), sub(kGroupA, 3, false),
                                         sub(kGroupB, 4)};
  EXPECT_EQ(EventPublisher::subscriber_count(subs, kGroupA), 2u);
  EXPECT_EQ(EventPublisher::subscriber_count(subs, kGroupB), 1u);
  EXPECT_EQ(EventPublisher::subscriber_count(subs, 0x30), 0u);
}

TEST(EventPublisherTest, FieldValuesAndSessions) {
  EventPublisher p({service(std::nullopt, 1)});
  EXPECT_EQ(p.find(0, 0x8003), nullptr);
  EventPublisher::Event* f = p.find(0, kField);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->has_value);
  EXPECT_TRUE(f->in_group(kGroupB));
  EXPECT_FALSE(f->in_group(kGroupA));
  const std::vector<std::uint8_t> v{1, 2, 3};
  EventPublisher::store(*f, v);
  EXPECT_TRUE(f->has_value);
  EXPECT_EQ(f->value, v);
  EXPECT_EQ(f->session.next(), 1);  // each event counts its own sessions
  EXPECT_EQ(f->session.next(), 2);
  EXPECT_EQ(p.find(0, kEvent)->session.next(), 1);
  EXPECT_EQ(p.events(0).size(), 2u);
}

}  // namespace
}  // namespace layersec::someip
