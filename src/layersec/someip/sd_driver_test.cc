// SdDriver on its own: a server-side and a client-side driver, each over a
// RecordingWriter with a recording delegate, their SD datagrams carried from
// one to the other by the test (no runtime, no network). Checks what the
// driver turns SD steps into: availability once per change, the initial-event
// hook for a new subscriber, multicast membership from the Ack (left again
// when the service goes away), FindService restarted for a lost service, and
// an early end of the step when the runtime stopped.
#include "layersec/someip/sd_driver.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "layersec/someip/fake_io_test_support.h"
#include "layersec/someip/runtime_test_support.h"
#include "layersec/someip/sd_test_support.h"

namespace layersec::someip {
namespace {

using namespace testing_support;

const Endpoint kGroup{IpAddress::v4(239, 0, 0, 7), 30600, L4Proto::kUdp};

struct Recorder final : SdDriver::Delegate {
  std::vector<SdDatagram> outbox;
  std::vector<std::tuple<std::uint16_t, std::uint16_t, bool>> availability;
  std::vector<std::pair<std::size_t, SdEvent>> subscribed;
  std::vector<TimePoint> steps;
  int group_datagrams = 0;
  bool run = true;

  void send_sd(const SdDatagram& d) override { outbox.push_back(d); }
  void on_availability(std::uint16_t s, std::uint16_t i, bool up) override {
    availability.emplace_back(s, i, up);
    if (stop_on_availability) run = false;
  }
  void on_subscribed(std::size_t service, const SdEvent& ev) override { subscribed.emplace_back(service, ev); }
  void on_step_done(TimePoint now) override { steps.push_back(now); }
  PacketWriter::Handler group_handler(std::uint16_t) override {
    return [this](const PacketWriter::Datagram&) { ++group_datagrams; };
  }
  bool running() const override { return run; }
  bool stop_on_availability = false;
};

struct Side {
  RuntimeConfig cfg;
  RecordingWriter io;
  FixedRandom random{Duration::milliseconds(0)};
  RuntimeCounters counters;
  Recorder rec;
  SdDriver driver;
  Side(RuntimeConfig c, std::uint8_t host)
      : cfg(std::move(c)), io(IpAddress::v4(10, 0, 0, host)), driver(cfg, io, random, counters, rec) {}
  [[nodiscard]] Endpoint sd_endpoint() const { return Endpoint{io.local_address(), kSdPort, L4Proto::kUdp}; }
};

// Kinds of the entries in one SD datagram.
std::vector<EntryKind> kinds(const SdDatagram& d) {
  std::vector<EntryKind> out;
  auto m = parse_message(d.bytes);
  if (!m.ok()) return out;
  auto sd = parse_sd_message(*m);
  if (!sd.ok()) return out;
  for (std::size_t i = 0; i < sd->entry_count(); ++i) out.push_back(sd->entry(i).kind());
  return out;
}
bool sent_kind(const std::vector<SdDatagram>& box, std::size_t from, EntryKind k) {
  for (std::size_t i = from; i < box.size(); ++i)
    for (auto x : kinds(box[i]))
      if (x == k) return true;
  return false;
}

struct Pair {
  Side server;
  Side client;
  TimePoint now;
  explicit Pair(bool multicast) : server(config(multicast), 1), client(client_config(2), 2) {
    server.driver.build(kMaxUdpPayload);
    client.driver.build(kMaxUdpPayload);
  }
  static RuntimeConfig config(bool multicast) {
    RuntimeConfig c = server_config();
    if (multicast) c.services[0].eventgroups[0].multicast = kGroup;
    return c;
  }
  // Carries every queued datagram to the other side (unicast to its
  // destination, multicast to both), then runs due timers; `ms` steps.
  void run(int ms) {
    for (int i = 0; i < ms; ++i) {
      for (int round = 0; round < 4; ++round) {
        for (auto* from : {&server, &client}) {
          Side* to = from == &server ? &client : &server;
          std::vector<SdDatagram> box;
          box.swap(from->rec.outbox);
          from->rec.outbox.reserve(box.size());
          for (const auto& d : box) {
            carried.push_back(d);
            if (d.multicast || d.destination.address == to->io.local_address())
              to->driver.on_datagram(now, d.bytes, from->sd_endpoint(), d.multicast);
          }
        }
      }
      now += Duration::milliseconds(1);
      for (auto* s : {&server, &client})
        if (s->driver.next_deadline() <= now) s->driver.on_timer(now);
    }
  }
  std::vector<SdDatagram> carried;
};

TEST(SdDriverTest, BuildsMachinesFromTheConfiguration) {
  Side s(client_config(2), 2);
  EXPECT_FALSE(s.driver.built());
  EXPECT_EQ(s.driver.counters(), nullptr);
  EXPECT_EQ(s.driver.next_deadline(), TimePoint::max());
  EXPECT_TRUE(s.driver.subscriptions(0).empty());
  ASSERT_EQ(s.driver.required().size(), 1u);
  EXPECT_EQ(s.driver.required()[0].port, kClientPort);
  s.driver.build(kMaxUdpPayload);
  EXPECT_TRUE(s.driver.built());
  ASSERT_NE(s.driver.required()[0].sd, nullptr);
  bool configured = false;
  EXPECT_EQ(s.driver.find_available(kService, kInstance, configured), nullptr);
  EXPECT_TRUE(configured);  // required, but no offer yet
  EXPECT_EQ(s.driver.find_available(0x4321, 0xFFFF, configured), nullptr);
  EXPECT_FALSE(configured);
}

TEST(SdDriverTest, OfferSubscribeAckAndLoss) {
  Pair p(true);
  p.server.driver.start(p.now);
  p.client.driver.start(p.now);
  EXPECT_EQ(p.server.rec.steps.size(), 1u);  // start is one SD step
  p.run(300);

  // Available once, subscribed once, the multicast group joined from the Ack.
  ASSERT_EQ(p.client.rec.availability.size(), 1u);
  EXPECT_EQ(p.client.rec.availability[0], std::make_tuple(kService, kInstance, true));
  bool configured = false;
  const SdDriver::Required* r = p.client.driver.find_available(kService, 0xFFFF, configured);
  ASSERT_NE(r, nullptr);
  const Endpoint server_ep{IpAddress::v4(10, 0, 0, 1), kServicePort, L4Proto::kUdp};
  EXPECT_EQ(p.client.driver.offered_from(kService, server_ep), r);
  EXPECT_EQ(p.client.driver.offered_from(kService, Endpoint{IpAddress::v4(10, 0, 0, 9), kServicePort,
                                                                L4Proto::kUdp}),
            nullptr);
  ASSERT_FALSE(p.server.rec.subscribed.empty());
  EXPECT_EQ(p.server.rec.subscribed[0].first, 0u);
  EXPECT_EQ(p.server.rec.subscribed[0].second.eventgroup_id, kEventgroup);
  ASSERT_TRUE(p.server.rec.subscribed[0].second.udp.has_value());
  EXPECT_EQ(p.server.rec.subscribed[0].second.udp->port, kClientPort);
  EXPECT_EQ(p.server.driver.subscriptions(0).size(), 1u);
  EXPECT_TRUE(p.client.io.joined(kGroup));
  EXPECT_EQ(p.client.io.joined_count(), 1u);  // renewed subscriptions join once
  EXPECT_TRUE(p.client.io.deliver_multicast(kGroup, server_ep, std::vector<std::uint8_t>{1}));
  EXPECT_EQ(p.client.rec.group_datagrams, 1);

  // StopOffer: reported down, the group left, FindService started again.
  const std::size_t mark = p.carried.size();
  p.server.driver.stop(p.now);
  p.run(1);
  ASSERT_EQ(p.client.rec.availability.size(), 2u);
  EXPECT_EQ(p.client.rec.availability[1], std::make_tuple(kService, kInstance, false));
  EXPECT_FALSE(p.client.io.joined(kGroup));
  ASSERT_EQ(p.client.io.left.size(), 1u);
  EXPECT_EQ(p.client.io.left[0], kGroup);
  EXPECT_TRUE(sent_kind(p.carried, mark, EntryKind::kStopOfferService));
  EXPECT_FALSE(sent_kind(p.carried, mark, EntryKind::kOfferService));
  p.run(200);
  EXPECT_TRUE(sent_kind(p.carried, mark, EntryKind::kFindService));
  EXPECT_EQ(p.client.driver.find_available(kService, 0xFFFF, configured), nullptr);
}

TEST(SdDriverTest, FailedJoinIsCounted) {
  Pair p(true);
  p.client.io.fail_joins = true;
  p.server.driver.start(p.now);
  p.client.driver.start(p.now);
  p.run(300);
  EXPECT_FALSE(p.client.io.joined(kGroup));
  EXPECT_GE(p.client.counters.transport_errors, 1u);
  EXPECT_EQ(p.client.rec.availability.size(), 1u);  // the service itself is up
}

TEST(SdDriverTest, StepEndsWhenAHandlerStopsTheRuntime) {
  Pair p(true);
  p.client.rec.stop_on_availability = true;
  p.server.driver.start(p.now);
  p.client.driver.start(p.now);
  p.run(300);
  // The first event stopped the runtime: no event after it is handled (the
  // Ack's group is not joined).
  EXPECT_EQ(p.client.rec.availability.size(), 1u);
  EXPECT_FALSE(p.client.io.joined(kGroup));
}

}  // namespace
}  // namespace layersec::someip
