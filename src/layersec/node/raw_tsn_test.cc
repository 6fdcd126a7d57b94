// The raw SOME/IP path with its TSN first hop (someip::RawTransport +
// tsn::FirstHopStage), with and without a MACsec SecY (macsec::MacsecFilter),
// on two detached transports joined back to back under fake clocks: no root.
//   * frames leave tagged with their stream's PCP/VID, in the clear-tag
//     layout before the SecTAG, in the standard layout inside it;
//   * ST overtakes queued BE and the SecY numbers frames in wire order (PNs
//     increase on the wire), so a receiver with replay window 0 takes all;
//   * the receiver pops known tags and drops, counted, relabelled, unknown,
//     stripped and replayed frames.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <vector>

#include "layersec/base/time.h"
#include "layersec/macsec/link.h"
#include "layersec/net/event_loop.h"
#include "layersec/someip/raw_transport.h"
#include "layersec/tsn/first_hop_stage.h"
#include "layersec/tsn/shaper_test_support.h"

namespace layersec::node {
namespace {

using Datagram = someip::Transport::Datagram;
using someip::Endpoint;
using someip::IpAddress;
using someip::L4Proto;

constexpr std::uint16_t kStPort = 30501;
constexpr std::uint16_t kBePort = 30502;
const net::Ipv4Address kIpA = net::Ipv4Address::from_octets(10, 0, 0, 1);
const net::Ipv4Address kIpB = net::Ipv4Address::from_octets(10, 0, 0, 2);
const net::MacAddress kMacA = net::MacAddress::local(kIpA.value);
const net::MacAddress kMacB = net::MacAddress::local(kIpB.value);

using tsn::testing_support::FakeClock;
using tsn::testing_support::FakeTimer;

tsn::StreamRule rule(std::uint32_t handle, std::uint16_t port, std::uint16_t vid, std::uint8_t pcp) {
  tsn::StreamRule r;
  r.kind = tsn::StreamMatch::kIp;
  r.handle = handle;
  r.dst_ip = kIpB.value;
  r.protocol = 17;
  r.dst_port = port;
  r.set_vid = vid;
  r.set_pcp = pcp;
  return r;
}

// 1 ms cycle, ST (class 1) 300 us then BE 700 us, 100 Mbit/s.
tsn::FirstHopSettings settings(std::size_t expansion) {
  tsn::FirstHopSettings s;
  s.port_bps = 100'000'000;
  s.schedule = tsn::testing_support::st_be_schedule(s.port_bps);
  EXPECT_TRUE(s.streams.add(rule(1, kStPort, 10, 5)));
  EXPECT_TRUE(s.streams.add(rule(2, kBePort, 20, 0)));
  s.expansion_bytes = expansion;
  return s;
}

std::vector<std::uint8_t> sak() { return std::vector<std::uint8_t>(16, 0x42); }

macsec::SecY secy(const net::MacAddress& self, const net::MacAddress& peer, macsec::VlanMode mode) {
  macsec::SecYConfig c;
  c.sci = macsec::Sci::from_parts(self.bytes.data(), 1);
  c.vlan_mode = mode;
  c.replay_window = 0;  // wire order must be PN order
  macsec::SecY s(c);
  const auto k = sak();
  EXPECT_TRUE(s.install_tx_sa(0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  EXPECT_TRUE(s.set_encoding_sa(0).ok());
  const macsec::Sci peer_sci = macsec::Sci::from_parts(peer.bytes.data(), 1);
  EXPECT_TRUE(s.add_rx_sc(peer_sci).ok());
  EXPECT_TRUE(s.install_rx_sa(peer_sci, 0, macsec::SaKeys{ByteSpan(k.data(), k.size())}, 1).ok());
  return s;
}

someip::RawTransportConfig config_for(net::Ipv4Address self, net::Ipv4Address peer) {
  someip::RawTransportConfig c;
  c.interface = "detached";
  c.address = self;
  c.neighbours[peer] = net::MacAddress::local(peer.value);
  return c;
}

// A sends through its stage (and SecY); what reaches the wire is kept and
// handed to B on deliver().
struct Bed {
  explicit Bed(std::optional<macsec::VlanMode> mode) {
    if (mode) {
      link_a = std::make_unique<macsec::MacsecLink>(secy(kMacA, kMacB, *mode));
      link_b = std::make_unique<macsec::MacsecLink>(secy(kMacB, kMacA, *mode));
      filter_a = std::make_unique<macsec::MacsecFilter>(*link_a);
      filter_b = std::make_unique<macsec::MacsecFilter>(*link_b);
    }
    const std::size_t exp = mode ? static_cast<std::size_t>(macsec::kMacsecOverhead) : 0;
    stage_a = std::make_unique<tsn::FirstHopStage>(settings(exp), clock, timer_a);
    stage_b = std::make_unique<tsn::FirstHopStage>(settings(exp), clock, timer_b);
    a = someip::RawTransport::detached(
        loop, config_for(kIpA, kIpB), filter_a.get(), [this](ByteSpan f) { wire.emplace_back(f.begin(), f.end()); },
        stage_a.get());
    b = someip::RawTransport::detached(loop, config_for(kIpB, kIpA), filter_b.get(), [](ByteSpan) {}, stage_b.get());
    EXPECT_TRUE(a->bind(40000, [](const Datagram&) {}).ok());
    for (std::uint16_t port : {kStPort, kBePort}) {
      EXPECT_TRUE(b->bind(port, [this, port](const Datagram& d) {
                     received.push_back({port, std::vector<std::uint8_t>(d.payload.begin(), d.payload.end())});
                   }).ok());
    }
  }
  bool send(std::uint16_t port, std::uint8_t seq, std::size_t size = 100) {
    std::vector<std::uint8_t> payload(size, seq);
    return a->send(40000, Endpoint{IpAddress::v4(10, 0, 0, 2), port, L4Proto::kUdp}, payload).ok();
  }
  void advance_to(std::int64_t t) {
    while (timer_a.armed && timer_a.at <= t) {
      clock.now = timer_a.at;
      timer_a.armed = false;
      stage_a->service();
    }
    clock.now = t;
  }
  void deliver(std::vector<std::uint8_t> f) { b->handle_frame(f); }

  ManualClock loop_clock{TimePoint::from_ns(1'000'000'000)};
  net::EventLoop loop{loop_clock};
  FakeClock clock;
  FakeTimer timer_a, timer_b;
  std::unique_ptr<macsec::MacsecLink> link_a, link_b;
  std::unique_ptr<macsec::MacsecFilter> filter_a, filter_b;
  std::unique_ptr<tsn::FirstHopStage> stage_a, stage_b;
  std::unique_ptr<someip::RawTransport> a, b;
  std::vector<std::vector<std::uint8_t>> wire;
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> received;
};

std::uint16_t be16(const std::vector<std::uint8_t>& f, std::size_t at) {
  return static_cast<std::uint16_t>((f[at] << 8) | f[at + 1]);
}
std::uint32_t be32(const std::vector<std::uint8_t>& f, std::size_t at) {
  return (static_cast<std::uint32_t>(be16(f, at)) << 16) | be16(f, at + 2);
}

// 3 BE queued in the ST window, then 2 ST: the first leaves at once, the
// second when the first's wire time (100 Mbit/s) is over; BE at 300 us.
void send_mix(Bed& b) {
  b.clock.now = 100'000;
  for (std::uint8_t i = 0; i < 3; ++i) ASSERT_TRUE(b.send(kBePort, static_cast<std::uint8_t>(0xB0 + i)));
  for (std::uint8_t i = 0; i < 2; ++i) ASSERT_TRUE(b.send(kStPort, static_cast<std::uint8_t>(0x50 + i)));
  ASSERT_EQ(b.wire.size(), 1u);
  b.advance_to(299'999);
  ASSERT_EQ(b.wire.size(), 2u);
  b.advance_to(1'000'000);
  ASSERT_EQ(b.wire.size(), 5u);
}

TEST(RawTsn, ClearTagLayoutPutsThePcpBeforeTheSecTagAndPnsFollowTheWire) {
  Bed b(macsec::VlanMode::kClearTag);
  send_mix(b);
  std::uint32_t last_pn = 0;
  for (std::size_t i = 0; i < b.wire.size(); ++i) {
    const auto& f = b.wire[i];
    EXPECT_EQ(be16(f, 12), 0x8100);
    EXPECT_EQ(be16(f, 14), i < 2 ? (5 << 13) | 10 : 20) << i;
    EXPECT_EQ(be16(f, 16), 0x88E5);
    const std::uint32_t pn = be32(f, 20);
    EXPECT_GT(pn, last_pn) << "frame " << i;
    last_pn = pn;
  }
  for (const auto& f : b.wire) b.deliver(f);
  ASSERT_EQ(b.received.size(), 5u);
  EXPECT_EQ(b.received[0].first, kStPort);
  EXPECT_EQ(b.received[0].second[0], 0x50);
  EXPECT_EQ(b.received[2].first, kBePort);
  EXPECT_EQ(b.received[4].second[0], 0xB2);
  EXPECT_EQ(b.stage_b->path().counters().rx_tag_popped, 5u);
  EXPECT_EQ(b.link_b->secy().stats().InPktsLate, 0u);
  EXPECT_EQ(b.a->stats().tx_frames, 5u);
}

TEST(RawTsn, StandardLayoutHidesTheTagInsideTheSecureData) {
  Bed b(macsec::VlanMode::kStandard);
  send_mix(b);
  for (const auto& f : b.wire) EXPECT_EQ(be16(f, 12), 0x88E5);
  for (const auto& f : b.wire) b.deliver(f);
  EXPECT_EQ(b.received.size(), 5u);
  EXPECT_EQ(b.stage_b->path().counters().rx_tag_popped, 5u);
}

TEST(RawTsn, WithoutMacsecTheTagIsOnThePlainFrame) {
  Bed b(std::nullopt);
  send_mix(b);
  EXPECT_EQ(be16(b.wire[0], 12), 0x8100);
  EXPECT_EQ(be16(b.wire[0], 16), 0x0800);
  for (const auto& f : b.wire) b.deliver(f);
  EXPECT_EQ(b.received.size(), 5u);
  // Not an IPv4 or 88-E5 frame: counted before anything parses it.
  std::vector<std::uint8_t> arp = b.wire[0];
  arp[16] = 0x08;
  arp[17] = 0x06;
  b.deliver(arp);
  EXPECT_EQ(b.b->stats().rx_not_udp, 1u);
}

// In the clear-tag layout without ICV coverage an on-path device can rewrite
// or strip the tag; the receiver's stage refuses every such frame.
TEST(RawTsn, RelabelledStrippedUnknownAndReplayedFramesAreDroppedAndCounted) {
  Bed b(macsec::VlanMode::kClearTag);
  b.clock.now = 100'000;
  for (std::uint8_t i = 0; i < 4; ++i) ASSERT_TRUE(b.send(kStPort, i));
  b.advance_to(299'999);
  ASSERT_EQ(b.wire.size(), 4u);
  auto relabelled = b.wire[0];  // ST content under BE's tag
  relabelled[14] = 0x00;
  relabelled[15] = 20;
  b.deliver(relabelled);
  auto unknown = b.wire[1];
  unknown[15] = 99;
  b.deliver(unknown);
  std::vector<std::uint8_t> stripped(b.wire[2].begin(), b.wire[2].begin() + 12);
  stripped.insert(stripped.end(), b.wire[2].begin() + 16, b.wire[2].end());
  b.deliver(stripped);
  b.deliver(b.wire[3]);
  b.deliver(b.wire[3]);  // replayed: the SecY refuses it
  EXPECT_EQ(b.received.size(), 1u);
  const auto& k = b.stage_b->path().counters();
  EXPECT_EQ(k.rx_tag_mismatch, 1u);
  EXPECT_EQ(k.rx_unknown_vid, 1u);
  EXPECT_EQ(k.rx_untagged_stream, 1u);
  EXPECT_EQ(k.rx_tag_popped, 1u);
  EXPECT_EQ(b.b->stats().rx_stage_dropped, 3u);
  EXPECT_EQ(b.b->stats().rx_filter_dropped, 1u);
}

TEST(RawTsn, AFullShaperQueueFailsTheSendAndTheTagCountsInTheMtu) {
  Bed b(macsec::VlanMode::kClearTag);
  b.clock.now = 100'000;
  // 256 BE frames queue (the default limit) while BE's gate is closed.
  int ok = 0;
  for (int i = 0; i < 300; ++i) ok += b.send(kBePort, 1) ? 1 : 0;
  EXPECT_EQ(ok, 256);
  EXPECT_EQ(b.a->stats().tx_stage_refused, 44u);
  EXPECT_EQ(b.stage_a->shaper().port().counters(0).dropped_queue_full, 44u);
  // 1500 - 20 (IPv4) - 8 (UDP) - 32 (SecTAG + ICV) - 4 (tag) = 1436.
  EXPECT_TRUE(b.send(kStPort, 1, 1436));
  EXPECT_FALSE(b.send(kStPort, 1, 1437));
  EXPECT_EQ(b.a->stats().tx_too_large, 1u);
}

}  // namespace
}  // namespace layersec::node
