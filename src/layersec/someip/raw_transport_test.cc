// RawTransport: the runtime on self-framed Ethernet/IPv4/UDP.
//
//   * Detached transports joined back to back (the sink of one feeds
//     handle_frame of the other) under a manual clock, no root: a full
//     runtime exchange (SD, request/response, unicast and multicast events,
//     StopOffer), plain and through a LinkFilter; tampered and plain frames
//     under the filter are dropped and counted.
//   * Every receive outcome lands in its own counter and nothing malformed
//     or not addressed to us reaches a handler.
//   * Send errors: kTooLarge (MTU, filter overhead), kUnreachable (no
//     neighbour, IPv6), kNotBound, kPortInUse; wake_at.
//   * As root: two network namespaces whose veths carry no IPv4 address, so
//     only the packet sockets can carry the exchange (checked in the
//     kernel's own UDP counters).
//
// The MACsec variants run through a real macsec::MacsecFilter (someip_test
// links layersec_macsec for this); the same paths also run through TagFilter
// below, a test filter of the same shape with exactly checkable frames.
#include "layersec/someip/raw_transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "layersec/net/event_loop.h"
#include "layersec/net/netns.h"
#include "layersec/someip/runtime.h"
#include "layersec/someip/runtime_net.h"
#include "layersec/someip/runtime_test_support.h"

#include "layersec/macsec/link.h"

namespace layersec::someip {
namespace {

using testing_support::client_config;
using testing_support::kEvent;
using testing_support::kEventgroup;
using testing_support::kInstance;
using testing_support::kMethod;
using testing_support::kService;
using testing_support::kServicePort;
using testing_support::server_config;

constexpr std::uint16_t kMcEvent = 0x8003;
constexpr std::uint16_t kMcEventgroup = 0x0020;
const Endpoint kMcGroup{IpAddress::v4(239, 1, 2, 3), 30600, L4Proto::kUdp};

const net::Ipv4Address kIpA = net::Ipv4Address::from_octets(10, 0, 0, 1);
const net::Ipv4Address kIpB = net::Ipv4Address::from_octets(10, 0, 0, 2);

std::uint16_t ether_type(ByteSpan f) { return static_cast<std::uint16_t>((f[12] << 8) | f[13]); }

// --- a test LinkFilter ----------------------------------------------------

// The shape of a MACsec SecY without the crypto: outbound moves the frame
// behind EtherType 88-B5 (IEEE local experimental) and appends a 4-byte
// check over everything before it; inbound accepts only 88-B5 frames whose
// check holds and restores the plain frame in place.
class TagFilter final : public net::LinkFilter {
 public:
  static constexpr std::size_t kOverhead = 6;  // outer EtherType + check

  std::optional<ByteSpan> outbound(ByteSpan plain) override {
    if (refuse || plain.size() < 14) {
      ++refused;
      return std::nullopt;
    }
    out_.assign(plain.begin(), plain.begin() + 12);
    out_.push_back(0x88);
    out_.push_back(0xB5);
    out_.insert(out_.end(), plain.begin() + 12, plain.end());
    const std::uint32_t c = check(ByteSpan(out_.data(), out_.size()));
    for (int i = 3; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    ++protected_frames;
    return ByteSpan(out_.data(), out_.size());
  }

  std::optional<ByteSpan> inbound(MutableByteSpan wire) override {
    if (wire.size() < 14 + kOverhead || ether_type(wire) != 0x88B5) {
      ++dropped;
      return std::nullopt;
    }
    const std::size_t body = wire.size() - 4;
    std::uint32_t c = 0;
    for (std::size_t i = 0; i < 4; ++i) c = (c << 8) | wire[body + i];
    if (c != check(ByteSpan(wire.data(), body))) {
      ++dropped;
      return std::nullopt;
    }
    std::memmove(wire.data() + 2, wire.data(), 12);  // drop the outer EtherType
    ++delivered;
    return ByteSpan(wire.data() + 2, body - 2);
  }

  [[nodiscard]] std::size_t overhead() const override { return kOverhead; }
  [[nodiscard]] std::uint16_t wire_ether_type() const override { return 0x88B5; }

  bool refuse = false;
  int refused = 0, protected_frames = 0, dropped = 0, delivered = 0;

 private:
  static std::uint32_t check(ByteSpan b) {  // FNV-1a
    std::uint32_t h = 2166136261u;
    for (std::uint8_t x : b) h = (h ^ x) * 16777619u;
    return h;
  }
  std::vector<std::uint8_t> out_ = std::vector<std::uint8_t>(2048);
};

// --- two detached transports back to back ---------------------------------

RawTransportConfig config_for(net::Ipv4Address self, net::Ipv4Address peer) {
  RawTransportConfig c;
  c.interface = "detached";
  c.address = self;
  c.neighbours[peer] = net::MacAddress::local(peer.value);
  return c;
}

// A and B joined by a wire: what one transmits is queued and delivered to
// the other by pump(). Time is a ManualClock stepped 1 ms at a time.
class BackToBack {
 public:
  explicit BackToBack(net::LinkFilter* filter_a = nullptr, net::LinkFilter* filter_b = nullptr) {
    a = RawTransport::detached(loop, config_for(kIpA, kIpB), filter_a, [this](ByteSpan f) {
      to_b.emplace_back(f.begin(), f.end());
      sent_by_a.emplace_back(f.begin(), f.end());
    });
    b = RawTransport::detached(loop, config_for(kIpB, kIpA), filter_b, [this](ByteSpan f) {
      to_a.emplace_back(f.begin(), f.end());
      sent_by_b.emplace_back(f.begin(), f.end());
    });
  }

  void pump() {
    while (!to_a.empty() || !to_b.empty()) {
      if (!to_b.empty()) {
        std::vector<std::uint8_t> f = std::move(to_b.front());
        to_b.pop_front();
        if (on_wire) on_wire(f);
        b->handle_frame(f);
      }
      if (!to_a.empty()) {
        std::vector<std::uint8_t> f = std::move(to_a.front());
        to_a.pop_front();
        if (on_wire) on_wire(f);
        a->handle_frame(f);
      }
    }
  }

  bool run_until(const std::function<bool()>& done, Duration limit) {
    pump();
    for (Duration t = Duration::zero(); !done() && t < limit; t += Duration::milliseconds(1)) {
      clock.advance(Duration::milliseconds(1));
      loop.run_once(clock.now());
      pump();
    }
    return done();
  }

  ManualClock clock{TimePoint::from_ns(1'000'000'000)};
  net::EventLoop loop{clock};
  std::deque<std::vector<std::uint8_t>> to_a, to_b;
  std::vector<std::vector<std::uint8_t>> sent_by_a, sent_by_b;
  std::function<void(std::vector<std::uint8_t>&)> on_wire;  // tamper hook
  std::unique_ptr<RawTransport> a, b;
};

// --- the runtime exchange --------------------------------------------------

// server_config() plus a second eventgroup whose event goes to a multicast
// group from the first subscriber on.
RuntimeConfig exchange_server_config() {
  RuntimeConfig c = server_config();
  ServiceConfig& s = c.services[0];
  EventConfig e;
  e.event_id = kMcEvent;
  e.eventgroups = {kMcEventgroup};
  s.events.push_back(e);
  EventgroupConfig g;
  g.eventgroup_id = kMcEventgroup;
  g.multicast = kMcGroup;
  g.multicast_threshold = 1;
  s.eventgroups.push_back(g);
  return c;
}

RuntimeConfig exchange_client_config() {
  RuntimeConfig c = client_config(0x0042);
  c.clients[0].eventgroups.push_back(kMcEventgroup);
  return c;
}

using RunUntil = std::function<bool(const std::function<bool()>&, Duration)>;

// SD (offer, subscribe to both eventgroups), a request/response, a unicast
// event, a multicast event, then StopOffer.
void run_exchange(Runtime& server, Runtime& client, const RunUntil& run_until) {
  ASSERT_TRUE(server.set_method_handler(kService, kInstance, kMethod, [](const Request& rq, Reply& rp) {
    rp.payload.assign(rq.payload.begin(), rq.payload.end());
    rp.payload.push_back(static_cast<std::uint8_t>(rq.client_id));
  }).ok());
  std::vector<std::uint8_t> event, mc_event;
  bool event_multicast = true, mc_event_multicast = false;
  client.on_event(kService, kEvent, [&](const Notification& n) {
    event.assign(n.payload.begin(), n.payload.end());
    event_multicast = n.multicast;
  });
  client.on_event(kService, kMcEvent, [&](const Notification& n) {
    mc_event.assign(n.payload.begin(), n.payload.end());
    mc_event_multicast = n.multicast;
  });
  ASSERT_TRUE(server.start().ok());
  ASSERT_TRUE(client.start().ok());
  ASSERT_TRUE(run_until(
      [&] {
        return client.available(kService) && server.subscriber_count(kService, kInstance, kEventgroup) == 1 &&
               server.subscriber_count(kService, kInstance, kMcEventgroup) == 1;
      },
      Duration::seconds(10)))
      << "SD did not complete";

  std::vector<std::uint8_t> answer;
  ReturnCode code = ReturnCode::kNotOk;
  const std::vector<std::uint8_t> payload = {0x51, 0x52, 0x53};
  ASSERT_TRUE(client.request(kService, kInstance, kMethod, payload, [&](const ResponseResult& r) {
    code = r.code;
    answer.assign(r.payload.begin(), r.payload.end());
  }).ok());
  ASSERT_TRUE(run_until([&] { return !answer.empty(); }, Duration::seconds(5)));
  EXPECT_EQ(code, ReturnCode::kOk);
  EXPECT_EQ(answer, (std::vector<std::uint8_t>{0x51, 0x52, 0x53, 0x42}));

  const std::vector<std::uint8_t> ev = {0xE1, 0xE2};
  ASSERT_TRUE(server.notify(kService, kInstance, kEvent, ev).ok());
  ASSERT_TRUE(run_until([&] { return !event.empty(); }, Duration::seconds(5)));
  EXPECT_EQ(event, ev);
  EXPECT_FALSE(event_multicast);

  const std::vector<std::uint8_t> mc = {0xC1, 0xC2, 0xC3};
  ASSERT_TRUE(server.notify(kService, kInstance, kMcEvent, mc).ok());
  ASSERT_TRUE(run_until([&] { return !mc_event.empty(); }, Duration::seconds(5)));
  EXPECT_EQ(mc_event, mc);
  EXPECT_TRUE(mc_event_multicast);

  server.stop();
  ASSERT_TRUE(run_until([&] { return !client.available(kService); }, Duration::seconds(5)));
  client.stop();
}

// Runtimes over a BackToBack wire; destroyed before the wire's transports.
struct DetachedPair {
  explicit DetachedPair(BackToBack& w)
      : server(exchange_server_config(), *w.a, r1), client(exchange_client_config(), *w.b, r2) {}
  SeededRandom r1{11}, r2{22};
  Runtime server;
  Runtime client;
};

RunUntil runner(BackToBack& w) {
  return [&w](const std::function<bool()>& done, Duration limit) { return w.run_until(done, limit); };
}

// Nothing was refused, malformed or lost between two healthy peers.
void expect_clean(const RawTransportStats& tx, const RawTransportStats& rx) {
  EXPECT_EQ(rx.rx_frames, tx.tx_frames);
  EXPECT_EQ(rx.rx_datagrams, rx.rx_frames);
  EXPECT_EQ(rx.rx_filter_dropped, 0u);
  EXPECT_EQ(rx.rx_not_udp, 0u);
  EXPECT_EQ(rx.rx_malformed, 0u);
  EXPECT_EQ(rx.rx_not_for_us, 0u);
  EXPECT_EQ(tx.tx_errors + tx.tx_filter_refused + tx.tx_unreachable + tx.tx_too_large, 0u);
}

TEST(RawTransportTest, DetachedBackToBackRuntimeExchange) {
  BackToBack w;
  {
    DetachedPair p(w);
    ASSERT_NO_FATAL_FAILURE(run_exchange(p.server, p.client, runner(w)));
    EXPECT_GE(p.server.counters().requests_served, 1u);
  }
  expect_clean(w.a->stats(), w.b->stats());
  expect_clean(w.b->stats(), w.a->stats());
  EXPECT_GT(w.b->stats().rx_datagrams, 3u);

  // Every frame on the wire is a plain IPv4/UDP frame from its sender's MAC
  // with valid checksums; SD and the multicast event went to group MACs.
  bool sd_multicast = false, event_multicast = false;
  for (const auto& f : w.sent_by_a) {
    auto v = net::parse_udp_frame(f);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->ethernet.src, w.a->mac());
    EXPECT_EQ(v->src().address, kIpA);
    if (v->dst() == net::Ipv4Endpoint{net::Ipv4Address::from_octets(224, 224, 224, 245), kSdPort}) {
      sd_multicast = true;
      EXPECT_EQ(v->ethernet.dst, net::multicast_mac(v->dst().address));
    }
    if (v->dst() == net::Ipv4Endpoint{net::Ipv4Address::from_octets(239, 1, 2, 3), 30600}) {
      event_multicast = true;
      EXPECT_EQ(v->ethernet.dst, (net::MacAddress{{0x01, 0x00, 0x5E, 0x01, 0x02, 0x03}}));
    }
  }
  EXPECT_TRUE(sd_multicast);
  EXPECT_TRUE(event_multicast);

  // A node never hears its own multicast: the server's own SD multicast
  // reflected back to it is dropped and counted, not delivered.
  const auto before = w.a->stats();
  for (const auto& f : w.sent_by_a) {
    std::vector<std::uint8_t> copy = f;
    w.a->handle_frame(copy);
  }
  EXPECT_EQ(w.a->stats().rx_datagrams, before.rx_datagrams);
  EXPECT_EQ(w.a->stats().rx_not_for_us, before.rx_not_for_us + w.sent_by_a.size());
}

TEST(RawTransportTest, DetachedExchangeThroughALinkFilter) {
  TagFilter fa, fb;
  BackToBack w(&fa, &fb);
  {
    DetachedPair p(w);
    ASSERT_NO_FATAL_FAILURE(run_exchange(p.server, p.client, runner(w)));
  }
  expect_clean(w.a->stats(), w.b->stats());
  expect_clean(w.b->stats(), w.a->stats());
  EXPECT_EQ(static_cast<std::uint64_t>(fa.protected_frames), w.a->stats().tx_frames);
  EXPECT_EQ(static_cast<std::uint64_t>(fb.delivered), w.b->stats().rx_frames);
  for (const auto& f : w.sent_by_a) EXPECT_EQ(ether_type(f), 0x88B5);

  // Tampered on the wire: dropped by the filter, counted, never delivered.
  std::vector<std::uint8_t> bad = w.sent_by_a.back();
  bad[bad.size() / 2] ^= 0x01;
  const auto before = w.b->stats();
  w.b->handle_frame(bad);
  EXPECT_EQ(w.b->stats().rx_filter_dropped, before.rx_filter_dropped + 1);
  EXPECT_EQ(w.b->stats().rx_datagrams, before.rx_datagrams);

  // A plain frame (what an unfiltered peer sends) is not accepted either.
  net::UdpFrameSpec spec;
  spec.dst_mac = w.b->mac();
  spec.src_mac = w.a->mac();
  spec.src = {kIpA, kServicePort};
  spec.dst = {kIpB, testing_support::kClientPort};
  std::vector<std::uint8_t> plain(1600);
  const std::vector<std::uint8_t> msg = {1, 2, 3};
  auto n = net::build_udp_frame(spec, msg, plain);
  ASSERT_TRUE(n.ok());
  plain.resize(*n);
  w.b->handle_frame(plain);
  EXPECT_EQ(w.b->stats().rx_filter_dropped, before.rx_filter_dropped + 2);
  EXPECT_EQ(w.b->stats().rx_datagrams, before.rx_datagrams);

  // The filter refusing a frame fails the send and is counted.
  ASSERT_TRUE(w.a->bind(40000, [](const Transport::Datagram&) {}).ok());
  fa.refuse = true;
  auto st = w.a->send(40000, Endpoint{detail::from_ipv4(kIpB), 40000, L4Proto::kUdp}, msg);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error(), TransportError::kSystem);
  EXPECT_EQ(w.a->stats().tx_filter_refused, 1u);
}

// --- the receive path, one outcome per counter --------------------------

class RawReceiveTest : public ::testing::Test {
 protected:
  static constexpr std::uint16_t kPort = 30509;
  static constexpr std::uint16_t kGroupPort = 30600;
  const net::Ipv4Address kGroup = net::Ipv4Address::from_octets(239, 1, 2, 3);
  const net::Ipv4Address kPeer = net::Ipv4Address::from_octets(10, 0, 0, 9);

  void SetUp() override {
    tr = RawTransport::detached(loop, config_for(kIpA, kPeer), nullptr, [](ByteSpan) {});
    ASSERT_TRUE(tr->bind(kPort, [this](const Transport::Datagram& d) {
      ++delivered;
      last = d;
      last_payload.assign(d.payload.begin(), d.payload.end());
    }).ok());
    ASSERT_TRUE(tr->join(Endpoint{detail::from_ipv4(kGroup), kGroupPort, L4Proto::kUdp},
                         [this](const Transport::Datagram& d) {
                           ++delivered;
                           last = d;
                           last_payload.assign(d.payload.begin(), d.payload.end());
                         })
                    .ok());
  }

  std::vector<std::uint8_t> frame(net::Ipv4Endpoint dst, std::vector<std::uint8_t> payload = {7, 8, 9}) {
    net::UdpFrameSpec spec;
    spec.dst_mac = dst.address.is_multicast() ? net::multicast_mac(dst.address) : tr->mac();
    spec.src_mac = net::MacAddress::local(kPeer.value);
    spec.src = {kPeer, 5555};
    spec.dst = dst;
    std::vector<std::uint8_t> out(1600);
    auto n = net::build_udp_frame(spec, payload, out);
    EXPECT_TRUE(n.ok());
    out.resize(n.ok() ? *n : 0);
    return out;
  }
  std::vector<std::uint8_t> unicast() { return frame({kIpA, kPort}); }

  static void fix_ip_checksum(std::vector<std::uint8_t>& f) {
    f[24] = f[25] = 0;
    const std::uint16_t c = net::internet_checksum(ByteSpan(f.data() + 14, 20));
    f[24] = static_cast<std::uint8_t>(c >> 8);
    f[25] = static_cast<std::uint8_t>(c);
  }

  // Feeds `f` and checks exactly one counter moved by one and nothing was delivered.
  void expect_counted(std::vector<std::uint8_t> f, std::uint64_t RawTransportStats::*counter, const char* what) {
    SCOPED_TRACE(what);
    const RawTransportStats before = tr->stats();
    const int delivered_before = delivered;
    tr->handle_frame(f);
    const RawTransportStats& after = tr->stats();
    EXPECT_EQ(delivered, delivered_before);
    EXPECT_EQ(after.rx_frames, before.rx_frames + 1);
    EXPECT_EQ(after.*counter, before.*counter + 1);
    const std::uint64_t moved = (after.rx_filter_dropped - before.rx_filter_dropped) +
                                (after.rx_not_udp - before.rx_not_udp) + (after.rx_malformed - before.rx_malformed) +
                                (after.rx_not_for_us - before.rx_not_for_us) +
                                (after.rx_datagrams - before.rx_datagrams);
    EXPECT_EQ(moved, 1u);
  }

  ManualClock clock;
  net::EventLoop loop{clock};
  std::unique_ptr<RawTransport> tr;
  int delivered = 0;
  Transport::Datagram last;
  std::vector<std::uint8_t> last_payload;
};

TEST_F(RawReceiveTest, ValidUnicastAndMulticastAreDelivered) {
  auto f = unicast();
  tr->handle_frame(f);
  ASSERT_EQ(delivered, 1);
  EXPECT_EQ(last_payload, (std::vector<std::uint8_t>{7, 8, 9}));
  EXPECT_EQ(last.source, (Endpoint{detail::from_ipv4(kPeer), 5555, L4Proto::kUdp}));
  EXPECT_EQ(last.destination, (Endpoint{detail::from_ipv4(kIpA), kPort, L4Proto::kUdp}));
  EXPECT_FALSE(last.multicast);
  auto m = frame({kGroup, kGroupPort}, {1});
  tr->handle_frame(m);
  ASSERT_EQ(delivered, 2);
  EXPECT_TRUE(last.multicast);
  EXPECT_EQ(last.destination, (Endpoint{detail::from_ipv4(kGroup), kGroupPort, L4Proto::kUdp}));
  EXPECT_EQ(tr->stats().rx_datagrams, 2u);
  EXPECT_EQ(tr->stats().rx_frames, 2u);
}

TEST_F(RawReceiveTest, MalformedFramesAreCountedAndNeverDelivered) {
  using S = RawTransportStats;
  {
    auto f = unicast();
    f[42] ^= 0xFF;  // first payload byte: the UDP checksum no longer verifies
    expect_counted(f, &S::rx_malformed, "bad UDP checksum");
  }
  {
    auto f = unicast();
    f[40] ^= 0x01;  // the UDP checksum field itself
    expect_counted(f, &S::rx_malformed, "wrong UDP checksum value");
  }
  {
    auto f = unicast();
    f[22] ^= 0x01;  // TTL without a new header checksum
    expect_counted(f, &S::rx_malformed, "bad IPv4 header checksum");
  }
  {
    auto f = unicast();
    f.resize(40);  // inside the UDP header
    expect_counted(f, &S::rx_malformed, "truncated in UDP");
  }
  {
    auto f = unicast();
    f.resize(20);  // inside the IPv4 header
    expect_counted(f, &S::rx_malformed, "truncated in IPv4");
  }
  expect_counted({}, &S::rx_malformed, "empty frame");
  {
    auto f = unicast();
    f[20] = 0x20;  // MF: a fragment (never reassembled)
    fix_ip_checksum(f);
    expect_counted(f, &S::rx_malformed, "IPv4 fragment");
  }
  {
    auto f = unicast();
    f[12] = 0x86;  // IPv6 EtherType
    f[13] = 0xDD;
    expect_counted(f, &S::rx_not_udp, "not IPv4 (IPv6 EtherType)");
  }
  {
    net::ArpPacket arp;
    arp.sender_mac = net::MacAddress::local(kPeer.value);
    arp.sender_ip = kPeer;
    arp.target_ip = kIpA;
    std::vector<std::uint8_t> f(64);
    auto n = net::build_arp_frame(arp, f);
    ASSERT_TRUE(n.ok());
    f.resize(*n);
    expect_counted(f, &S::rx_not_udp, "ARP request (broadcast)");
  }
  {
    auto f = unicast();
    f[23] = 6;  // TCP
    fix_ip_checksum(f);
    expect_counted(f, &S::rx_not_udp, "IPv4 but not UDP");
  }
  expect_counted(frame({net::Ipv4Address::from_octets(10, 0, 0, 3), kPort}), &S::rx_not_for_us,
                 "another unicast IP (our MAC)");
  expect_counted(frame({kIpA, 40000}), &S::rx_not_for_us, "port not bound");
  expect_counted(frame({net::Ipv4Address::from_octets(239, 1, 2, 4), kGroupPort}), &S::rx_not_for_us,
                 "group not joined");
  expect_counted(frame({kGroup, static_cast<std::uint16_t>(kGroupPort + 1)}), &S::rx_not_for_us,
                 "joined group, other port");
  expect_counted(frame({kIpA, kGroupPort}), &S::rx_not_for_us, "group port on the unicast address");
  {
    auto f = unicast();
    f[5] ^= 0x01;  // destination MAC of another station
    expect_counted(f, &S::rx_not_for_us, "unicast frame for another MAC");
  }
  EXPECT_EQ(delivered, 0);
  EXPECT_EQ(tr->stats().rx_datagrams, 0u);

  // After unbind / leave the same frames are no longer ours.
  tr->unbind(kPort);
  tr->leave(Endpoint{detail::from_ipv4(kGroup), kGroupPort, L4Proto::kUdp});
  expect_counted(unicast(), &S::rx_not_for_us, "after unbind");
  expect_counted(frame({kGroup, kGroupPort}), &S::rx_not_for_us, "after leave");
  EXPECT_EQ(delivered, 0);
}

TEST_F(RawReceiveTest, HandlerMayUnbindItself) {
  tr->unbind(kPort);
  int calls = 0;
  ASSERT_TRUE(tr->bind(kPort, [&](const Transport::Datagram&) {
    ++calls;
    tr->unbind(kPort);
  }).ok());
  auto f = unicast();
  tr->handle_frame(f);
  auto g = unicast();
  tr->handle_frame(g);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(tr->stats().rx_not_for_us, 1u);
}

// --- send errors ------------------------------------------------------------

TEST(RawTransportTest, SendErrorsAreTypedAndCounted) {
  ManualClock clock;
  net::EventLoop loop(clock);
  std::vector<std::vector<std::uint8_t>> wire;
  auto tr = RawTransport::detached(loop, config_for(kIpA, kIpB), nullptr,
                                   [&](ByteSpan f) { wire.emplace_back(f.begin(), f.end()); });
  const Endpoint peer{detail::from_ipv4(kIpB), 30509, L4Proto::kUdp};
  const std::vector<std::uint8_t> one = {1};

  auto nb = tr->send(30501, peer, one);
  ASSERT_FALSE(nb.ok());
  EXPECT_EQ(nb.error(), TransportError::kNotBound);
  ASSERT_TRUE(tr->bind(30501, [](const Transport::Datagram&) {}).ok());
  auto twice = tr->bind(30501, [](const Transport::Datagram&) {});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error(), TransportError::kPortInUse);
  auto not_group = tr->join(peer, [](const Transport::Datagram&) {});
  ASSERT_FALSE(not_group.ok());
  EXPECT_EQ(not_group.error(), TransportError::kUnreachable);

  // MTU 1500: the IPv4 packet (20 + 8 + payload) must fit.
  ASSERT_TRUE(tr->send(30501, peer, std::vector<std::uint8_t>(1472, 0xAB)).ok());
  ASSERT_EQ(wire.size(), 1u);
  EXPECT_EQ(wire[0].size(), 14u + 1500u);
  auto big = tr->send(30501, peer, std::vector<std::uint8_t>(1473, 0xAB));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error(), TransportError::kTooLarge);
  EXPECT_EQ(tr->stats().tx_too_large, 1u);

  // No neighbour entry, or not IPv4: unreachable. Groups need none.
  auto nowhere = tr->send(30501, Endpoint{IpAddress::v4(10, 0, 0, 77), 30509, L4Proto::kUdp}, one);
  ASSERT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.error(), TransportError::kUnreachable);
  IpAddress v6;
  v6.family = IpFamily::kV6;
  v6.bytes[15] = 1;
  auto six = tr->send(30501, Endpoint{v6, 30509, L4Proto::kUdp}, one);
  ASSERT_FALSE(six.ok());
  EXPECT_EQ(six.error(), TransportError::kUnreachable);
  EXPECT_EQ(tr->stats().tx_unreachable, 2u);
  ASSERT_TRUE(tr->send(30501, Endpoint{IpAddress::v4(239, 9, 9, 9), 30600, L4Proto::kUdp}, one).ok());
  EXPECT_EQ(wire.back()[0], 0x01);  // 01:00:5e:09:09:09
  EXPECT_EQ(wire.back()[5], 0x09);
  EXPECT_EQ(tr->stats().tx_frames, 2u);
  // Short frames are padded to the Ethernet minimum without a filter; the
  // IPv4 identification advances per frame.
  EXPECT_EQ(wire.back().size(), 60u);
  EXPECT_NE(wire[0][18] * 256 + wire[0][19], wire[1][18] * 256 + wire[1][19]);
}

TEST(RawTransportTest, FilterOverheadAndSmallerMtuCount) {
  ManualClock clock;
  net::EventLoop loop(clock);
  TagFilter filter;
  auto tr = RawTransport::detached(loop, config_for(kIpA, kIpB), &filter, [](ByteSpan) {});
  const Endpoint peer{detail::from_ipv4(kIpB), 30509, L4Proto::kUdp};
  ASSERT_TRUE(tr->bind(30501, [](const Transport::Datagram&) {}).ok());
  ASSERT_TRUE(tr->send(30501, peer, std::vector<std::uint8_t>(1472 - TagFilter::kOverhead)).ok());
  auto over = tr->send(30501, peer, std::vector<std::uint8_t>(1473 - TagFilter::kOverhead));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error(), TransportError::kTooLarge);

  RawTransportConfig small = config_for(kIpA, kIpB);
  small.mtu = 576;
  auto tr2 = RawTransport::detached(loop, small, nullptr, [](ByteSpan) {});
  ASSERT_TRUE(tr2->bind(30501, [](const Transport::Datagram&) {}).ok());
  ASSERT_TRUE(tr2->send(30501, peer, std::vector<std::uint8_t>(548)).ok());
  auto over2 = tr2->send(30501, peer, std::vector<std::uint8_t>(549));
  ASSERT_FALSE(over2.ok());
  EXPECT_EQ(over2.error(), TransportError::kTooLarge);
  EXPECT_EQ(tr2->stats().tx_too_large, 1u);
}

TEST(RawTransportTest, WakeAtIsReplacedAndFiresOnce) {
  ManualClock clock;
  net::EventLoop loop(clock);
  auto tr = RawTransport::detached(loop, config_for(kIpA, kIpB), nullptr, [](ByteSpan) {});
  int fired = 0;
  tr->wake_at(clock.now() + Duration::seconds(100), [&] { fired += 100; });
  tr->wake_at(clock.now() + Duration::milliseconds(5), [&] { ++fired; });
  for (int i = 0; i < 10; ++i) {
    clock.advance(Duration::milliseconds(1));
    loop.run_once(clock.now());
  }
  EXPECT_EQ(fired, 1);
  tr->wake_at(clock.now() + Duration::milliseconds(1), [&] { fired += 10; });
  tr->wake_at(TimePoint::max(), [&] { fired += 10; });  // cancels
  clock.advance(Duration::seconds(1));
  loop.run_once(clock.now());
  EXPECT_EQ(fired, 1);
  // A pending timer does not outlive its transport.
  tr->wake_at(clock.now() + Duration::milliseconds(1), [&] { fired += 1000; });
  tr.reset();
  clock.advance(Duration::seconds(1));
  loop.run_once(clock.now());
  EXPECT_EQ(fired, 1);
}

// --- MACsec (macsec::MacsecFilter) ------------------------------------------

bool contains(ByteSpan hay, const std::vector<std::uint8_t>& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

std::vector<std::uint8_t> sak() {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(0xA0 + i);
  return k;
}

// GCM-AES-128, Strict, confidentiality, one SAK for both directions (as MKA
// distributes one SAK per CA), like harness/testbed.cc.
macsec::SecY make_secy(const net::MacAddress& self, const net::MacAddress& peer) {
  const macsec::Sci self_sci = macsec::Sci::from_parts(self.bytes.data(), 1);
  const macsec::Sci peer_sci = macsec::Sci::from_parts(peer.bytes.data(), 1);
  const auto k = sak();
  macsec::SecYConfig c;
  c.sci = self_sci;
  c.suite = macsec::CipherSuite::kGcmAes128;
  c.validate_frames = macsec::ValidateFrames::kStrict;
  c.confidentiality = true;
  macsec::SecY s(c);
  EXPECT_TRUE(s.install_tx_sa(0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  EXPECT_TRUE(s.set_encoding_sa(0).ok());
  EXPECT_TRUE(s.add_rx_sc(peer_sci).ok());
  EXPECT_TRUE(s.install_rx_sa(peer_sci, 0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  return s;
}

TEST(RawTransportMacsecTest, DetachedExchangeTamperedAndPlainFramesDropped) {
  const net::MacAddress mac_a = net::MacAddress::local(kIpA.value), mac_b = net::MacAddress::local(kIpB.value);
  macsec::MacsecLink link_a(make_secy(mac_a, mac_b)), link_b(make_secy(mac_b, mac_a));
  macsec::MacsecFilter fa(link_a), fb(link_b);
  BackToBack w(&fa, &fb);
  {
    DetachedPair p(w);
    ASSERT_NO_FATAL_FAILURE(run_exchange(p.server, p.client, runner(w)));
  }
  expect_clean(w.a->stats(), w.b->stats());
  expect_clean(w.b->stats(), w.a->stats());
  EXPECT_EQ(link_a.stats().tx_sent, w.a->stats().tx_frames);
  EXPECT_EQ(link_b.stats().rx_delivered, w.b->stats().rx_frames);
  EXPECT_EQ(link_b.secy().stats().InPktsOK, w.b->stats().rx_frames);
  const std::vector<std::uint8_t> request_marker = {0x51, 0x52, 0x53};
  for (const auto& f : w.sent_by_b) {
    EXPECT_EQ(ether_type(f), net::kEtherTypeMacsec);
    EXPECT_FALSE(contains(f, request_marker));  // encrypted on the wire
  }

  // Tampered: the ICV fails, the SecY drops it, the transport counts it.
  std::vector<std::uint8_t> bad = w.sent_by_a.back();
  bad[bad.size() - 20] ^= 0x01;
  const auto before = w.b->stats();
  const auto link_before = link_b.stats();
  w.b->handle_frame(bad);
  EXPECT_EQ(w.b->stats().rx_filter_dropped, before.rx_filter_dropped + 1);
  EXPECT_EQ(link_b.stats().rx_dropped, link_before.rx_dropped + 1);
  // Replayed (an exact earlier frame): dropped too.
  std::vector<std::uint8_t> replay = w.sent_by_a.front();
  w.b->handle_frame(replay);
  EXPECT_EQ(w.b->stats().rx_filter_dropped, before.rx_filter_dropped + 2);
  // Plain (a valid IPv4/UDP frame to a bound port): no fallback.
  net::UdpFrameSpec spec;
  spec.dst_mac = w.b->mac();
  spec.src_mac = w.a->mac();
  spec.src = {kIpA, kServicePort};
  spec.dst = {kIpB, testing_support::kClientPort};
  std::vector<std::uint8_t> plain(1600);
  auto n = net::build_udp_frame(spec, request_marker, plain);
  ASSERT_TRUE(n.ok());
  plain.resize(*n);
  // The client runtime has stopped; bind the port so only the filter can refuse it.
  bool heard = false;
  w.b->unbind(testing_support::kClientPort);
  ASSERT_TRUE(w.b->bind(testing_support::kClientPort, [&](const Transport::Datagram&) { heard = true; }).ok());
  w.b->handle_frame(plain);
  EXPECT_FALSE(heard);
  EXPECT_EQ(w.b->stats().rx_filter_dropped, before.rx_filter_dropped + 3);
  EXPECT_EQ(link_b.stats().rx_not_macsec, link_before.rx_not_macsec + 1);
  EXPECT_EQ(w.b->stats().rx_datagrams, before.rx_datagrams);
}

TEST(RawTransportMacsecTest, OverheadIsTheSecTagAndIcv) {
  ManualClock clock;
  net::EventLoop loop(clock);
  const net::MacAddress mac_a = net::MacAddress::local(kIpA.value), mac_b = net::MacAddress::local(kIpB.value);
  macsec::MacsecLink link(make_secy(mac_a, mac_b));
  macsec::MacsecFilter filter(link);
  std::vector<std::size_t> sizes;
  auto tr = RawTransport::detached(loop, config_for(kIpA, kIpB), &filter, [&](ByteSpan f) { sizes.push_back(f.size()); });
  const Endpoint peer{detail::from_ipv4(kIpB), 30509, L4Proto::kUdp};
  ASSERT_TRUE(tr->bind(30501, [](const Transport::Datagram&) {}).ok());
  ASSERT_TRUE(tr->send(30501, peer, std::vector<std::uint8_t>(1440)).ok());  // 1468 + 32 = 1500
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0], 14u + 1500u);  // exactly the link MTU: the bound is tight
  auto over = tr->send(30501, peer, std::vector<std::uint8_t>(1441));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error(), TransportError::kTooLarge);
  // A short datagram is not padded before protection.
  ASSERT_TRUE(tr->send(30501, peer, std::vector<std::uint8_t>(1)).ok());
  EXPECT_EQ(sizes[1], 14u + 20u + 8u + 1u + 32u);
}

// --- two network namespaces (root) ---------------------------------------

// The kernel's own UDP counters in a namespace ("Udp: InDatagrams NoPorts
// InErrors OutDatagrams ..." in /proc/net/snmp): name -> value.
std::map<std::string, long long> kernel_udp_counters(const net::NetnsTopology& topo, std::size_t i) {
  std::string out;
  std::map<std::string, long long> m;
  if (topo.exec(i, {"cat", "/proc/net/snmp"}, &out) != 0) return m;
  std::istringstream in(out);
  std::string line, names;
  while (std::getline(in, line)) {
    if (line.rfind("Udp: ", 0) != 0) continue;
    if (names.empty()) {
      names = line;
      continue;
    }
    std::istringstream n(names.substr(5)), v(line.substr(5));
    std::string name;
    long long value = 0;
    while (n >> name && v >> value) m[name] = value;
    break;
  }
  return m;
}

using FilterFactory = std::function<std::unique_ptr<net::LinkFilter>(const net::NetnsNode& self,
                                                                      const net::NetnsNode& peer)>;

// Runs the exchange between two namespaces whose veths have no IPv4
// address, with a filter on each side when `make_filter` is given. Each
// node has its own event loop (as separate ECUs would); one thread
// alternates run_once on both. The caller checks net::netns_available().
void netns_exchange(const FilterFactory& make_filter, const char* tag) {
  auto topo = net::NetnsTopology::pair(tag);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(net::run_command({"ip", "-n", topo.node(i).netns, "addr", "flush", "dev", topo.node(i).interface}), 0);
    std::string addrs;
    ASSERT_EQ(net::run_command({"ip", "-n", topo.node(i).netns, "-4", "addr", "show", "dev", topo.node(i).interface},
                               &addrs),
              0);
    ASSERT_EQ(addrs.find("inet "), std::string::npos) << addrs;
  }
  const auto udp_before0 = kernel_udp_counters(topo, 0), udp_before1 = kernel_udp_counters(topo, 1);
  ASSERT_FALSE(udp_before0.empty());
  ASSERT_FALSE(udp_before1.empty());

  MonotonicClock clock;
  net::EventLoop loop0(clock), loop1(clock);
  net::EventLoop* loops[2] = {&loop0, &loop1};
  std::unique_ptr<net::LinkFilter> filters[2];
  std::unique_ptr<RawTransport> tr[2];
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& self = topo.node(i);
    const auto& peer = topo.node(1 - i);
    if (make_filter) filters[i] = make_filter(self, peer);
    RawTransportConfig c;
    c.interface = self.interface;
    c.address = self.ip;
    c.neighbours[peer.ip] = peer.mac;
    net::NetnsScope in(self.netns);  // the packet socket keeps this namespace
    int err = 0;
    auto t = RawTransport::open(*loops[i], c, filters[i].get(), &err);
    ASSERT_TRUE(t.ok()) << "errno " << err;
    tr[i] = std::move(t).value();
    EXPECT_EQ(tr[i]->mac(), self.mac);
  }
  {
    SeededRandom r1(5), r2(6);
    Runtime server(exchange_server_config(), *tr[0], r1);
    Runtime client(exchange_client_config(), *tr[1], r2);
    ASSERT_NO_FATAL_FAILURE(run_exchange(server, client, [&](const std::function<bool()>& done, Duration limit) {
      const TimePoint deadline = clock.now() + limit;
      while (!done() && clock.now() < deadline) {
        loop0.run_once(clock.now() + Duration::milliseconds(1));
        loop1.run_once(clock.now() + Duration::milliseconds(1));
      }
      return done();
    }));
  }
  // The packet sockets carried every datagram: both transports count them,
  // nothing was malformed, and the kernel's UDP stack saw none of it.
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const auto& s = tr[i]->stats();
    EXPECT_GE(s.tx_frames, 2u);
    EXPECT_GE(s.rx_datagrams, 2u);
    EXPECT_EQ(s.rx_not_udp, 0u);
    EXPECT_EQ(s.rx_malformed, 0u);
    EXPECT_EQ(s.rx_filter_dropped, 0u);
    EXPECT_EQ(s.rx_errors, 0u);
    EXPECT_EQ(s.tx_errors, 0u);
  }
  const auto udp_after0 = kernel_udp_counters(topo, 0), udp_after1 = kernel_udp_counters(topo, 1);
  for (const char* name : {"InDatagrams", "NoPorts", "InErrors", "OutDatagrams"}) {
    EXPECT_EQ(udp_after0.at(name), udp_before0.at(name)) << name;
    EXPECT_EQ(udp_after1.at(name), udp_before1.at(name)) << name;
  }
}

#define LAYERSEC_SKIP_WITHOUT_NETNS()                                                               \
  do {                                                                                             \
    std::string reason;                                                                            \
    if (!net::netns_available(&reason))                                                            \
      GTEST_SKIP() << "needs root and iproute2 for network namespaces: " << reason;                \
  } while (false)

TEST(RawTransportNetnsTest, ExchangeOverPacketSocketsWithoutKernelAddresses) {
  LAYERSEC_SKIP_WITHOUT_NETNS();
  ASSERT_NO_FATAL_FAILURE(netns_exchange(nullptr, "lsraw"));
}

TEST(RawTransportNetnsTest, ExchangeThroughALinkFilter) {
  LAYERSEC_SKIP_WITHOUT_NETNS();
  ASSERT_NO_FATAL_FAILURE(netns_exchange(
      [](const net::NetnsNode&, const net::NetnsNode&) { return std::make_unique<TagFilter>(); }, "lsrawf"));
}

TEST(RawTransportNetnsTest, ExchangeThroughMacsec) {
  LAYERSEC_SKIP_WITHOUT_NETNS();
  std::vector<std::unique_ptr<macsec::MacsecLink>> links;  // outlive the filters and transports
  ASSERT_NO_FATAL_FAILURE(netns_exchange(
      [&](const net::NetnsNode& self, const net::NetnsNode& peer) -> std::unique_ptr<net::LinkFilter> {
        links.push_back(std::make_unique<macsec::MacsecLink>(make_secy(self.mac, peer.mac)));
        return std::make_unique<macsec::MacsecFilter>(*links.back());
      },
      "lsrawm"));
  ASSERT_EQ(links.size(), 2u);
  for (const auto& l : links) {
    EXPECT_GE(l->stats().tx_sent, 2u);
    EXPECT_GE(l->stats().rx_delivered, 2u);
    EXPECT_EQ(l->stats().rx_dropped, 0u);
    EXPECT_EQ(l->secy().stats().InPktsOK, l->stats().rx_delivered);
  }
}

// join() registers the group MAC on the interface (ip maddr lists it);
// leave() drops it again once no joined group maps to it.
TEST(RawTransportNetnsTest, LeaveDropsTheGroupMacOnlyWhenNoGroupUsesIt) {
  LAYERSEC_SKIP_WITHOUT_NETNS();
  auto topo = net::NetnsTopology::pair("lsrawg");
  const auto& node = topo.node(0);
  auto maddrs = [&] {
    std::string out;
    EXPECT_EQ(net::run_command({"ip", "-n", node.netns, "maddr", "show", "dev", node.interface}, &out), 0);
    return out;
  };
  MonotonicClock clock;
  net::EventLoop loop(clock);
  RawTransportConfig c;
  c.interface = node.interface;
  c.address = node.ip;
  std::unique_ptr<RawTransport> tr;
  {
    net::NetnsScope in(node.netns);
    int err = 0;
    auto t = RawTransport::open(loop, c, nullptr, &err);
    ASSERT_TRUE(t.ok()) << "errno " << err;
    tr = std::move(t).value();
  }
  // 239.1.2.3 and 239.129.2.3 share the MAC 01:00:5e:01:02:03.
  const Endpoint a{IpAddress::v4(239, 1, 2, 3), 30600, L4Proto::kUdp};
  const Endpoint b{IpAddress::v4(239, 129, 2, 3), 30601, L4Proto::kUdp};
  ASSERT_TRUE(tr->join(a, [](const Transport::Datagram&) {}).ok());
  ASSERT_TRUE(tr->join(b, [](const Transport::Datagram&) {}).ok());
  EXPECT_NE(maddrs().find("01:00:5e:01:02:03"), std::string::npos) << maddrs();
  tr->leave(a);
  EXPECT_NE(maddrs().find("01:00:5e:01:02:03"), std::string::npos) << "still used by " << b.address.to_string();
  tr->leave(b);
  EXPECT_EQ(maddrs().find("01:00:5e:01:02:03"), std::string::npos) << maddrs();
  tr->leave(b);  // idempotent
}

}  // namespace
}  // namespace layersec::someip
