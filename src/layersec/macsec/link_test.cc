// Tests of the MACsec link adapters: the adapter core (only verified frames
// are delivered, everything else counted), the simulated segment bindings
// (endpoint shim and switch port processor) and, as root, the TAP + AF_PACKET
// link between two network namespaces.
#include "layersec/macsec/link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "layersec/net/interface.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/sim_attack.h"
#include "layersec/net/sim_host.h"
#include "layersec/net/udp_socket.h"

namespace layersec::macsec {
namespace {

using net::Ipv4Address;
using net::MacAddress;

const MacAddress kMacA = MacAddress::local(0x7801);
const MacAddress kMacB = MacAddress::local(0x7802);
const Sci kSciA = Sci::from_parts(kMacA.bytes.data(), 1);
const Sci kSciB = Sci::from_parts(kMacB.bytes.data(), 1);

std::vector<std::uint8_t> key(std::uint8_t seed) {
  std::vector<std::uint8_t> k(16);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return k;
}

// A SecY that sends as `self` with `tx_key` and receives `peer` with `rx_key`.
SecY make(Sci self, Sci peer, const std::vector<std::uint8_t>& tx_key, const std::vector<std::uint8_t>& rx_key,
          ValidateFrames vf = ValidateFrames::kStrict, bool confidentiality = true) {
  SecYConfig c;
  c.sci = self;
  c.validate_frames = vf;
  c.confidentiality = confidentiality;
  SecY s(c);
  EXPECT_TRUE(s.install_tx_sa(0, SaKeys{ByteSpan(tx_key.data(), tx_key.size())}, 1).ok());
  EXPECT_TRUE(s.set_encoding_sa(0).ok());
  EXPECT_TRUE(s.add_rx_sc(peer).ok());
  EXPECT_TRUE(s.install_rx_sa(peer, 0, SaKeys{ByteSpan(rx_key.data(), rx_key.size())}, 1).ok());
  return s;
}

std::vector<std::uint8_t> udp_frame(const std::string& payload) {
  net::UdpFrameSpec spec;
  spec.dst_mac = kMacB;
  spec.src_mac = kMacA;
  spec.src = {Ipv4Address::from_octets(10, 0, 0, 1), 4000};
  spec.dst = {Ipv4Address::from_octets(10, 0, 0, 2), 5000};
  std::vector<std::uint8_t> out(2000);
  auto n = net::build_udp_frame(
      spec, ByteSpan(reinterpret_cast<const std::uint8_t*>(payload.data()), payload.size()), out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

bool contains(const std::vector<std::uint8_t>& hay, const std::string& needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end()) != hay.end();
}

std::uint16_t ether_type(ByteSpan f) { return static_cast<std::uint16_t>((f[12] << 8) | f[13]); }

TEST(MacsecLinkTest, ProtectThenValidateDeliversTheSameFrame) {
  MacsecLink a(make(kSciA, kSciB, key(1), key(2)));
  MacsecLink b(make(kSciB, kSciA, key(2), key(1)));
  const std::string marker = "MARKER-in-the-payload";
  const auto plain = udp_frame(marker);
  auto secure = a.protect(plain);
  ASSERT_TRUE(secure.has_value());
  EXPECT_EQ(ether_type(*secure), 0x88E5);
  EXPECT_EQ(secure->size(), plain.size() + kMacsecOverhead);
  std::vector<std::uint8_t> wire(secure->begin(), secure->end());
  EXPECT_FALSE(contains(wire, marker));
  auto got = b.validate(MutableByteSpan(wire.data(), wire.size()));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(std::vector<std::uint8_t>(got->begin(), got->end()), plain);
  EXPECT_EQ(a.stats().tx_frames, 1u);
  EXPECT_EQ(a.secy().stats().OutPktsEncrypted, 1u);
  EXPECT_EQ(b.stats().rx_frames, 1u);
  EXPECT_EQ(b.secy().stats().InPktsOK, 1u);
}

TEST(MacsecLinkTest, ClearFramesAreDroppedAndCountedEvenWhenTheSecYWouldDeliverThem) {
  for (auto vf : {ValidateFrames::kStrict, ValidateFrames::kCheck, ValidateFrames::kDisabled}) {
    MacsecLink b(make(kSciB, kSciA, key(2), key(1), vf));
    auto plain = udp_frame("clear");
    EXPECT_FALSE(b.validate(MutableByteSpan(plain.data(), plain.size())).has_value()) << to_string(vf);
    EXPECT_EQ(b.stats().rx_not_macsec, 1u);
    EXPECT_EQ(b.stats().rx_delivered, 0u);
    EXPECT_EQ(b.secy().stats().InPktsNoTag + b.secy().stats().InPktsUntagged, 1u);
  }
}

TEST(MacsecLinkTest, WrongKeyIsNotValidAndNotDelivered) {
  MacsecLink a(make(kSciA, kSciB, key(1), key(2)));
  MacsecLink b(make(kSciB, kSciA, key(2), key(9)));
  const auto plain = udp_frame("hello");
  auto secure = a.protect(plain);
  ASSERT_TRUE(secure.has_value());
  std::vector<std::uint8_t> wire(secure->begin(), secure->end());
  EXPECT_FALSE(b.validate(MutableByteSpan(wire.data(), wire.size())).has_value());
  EXPECT_EQ(b.secy().stats().InPktsNotValid, 1u);
  EXPECT_EQ(b.stats().rx_dropped, 1u);
}

TEST(MacsecLinkTest, UnverifiedFramesOfCheckModeAreNotDelivered) {
  // Integrity only + validateFrames Check: the SecY delivers a tampered frame
  // as InPktsInvalid; the link must not hand it to the controlled port.
  MacsecLink a(make(kSciA, kSciB, key(1), key(2), ValidateFrames::kCheck, /*confidentiality=*/false));
  MacsecLink b(make(kSciB, kSciA, key(2), key(1), ValidateFrames::kCheck, false));
  auto secure = a.protect(udp_frame("integrity only"));
  ASSERT_TRUE(secure.has_value());
  std::vector<std::uint8_t> wire(secure->begin(), secure->end());
  wire[wire.size() - 20] ^= 0x01;  // inside the User Data
  EXPECT_FALSE(b.validate(MutableByteSpan(wire.data(), wire.size())).has_value());
  EXPECT_EQ(b.secy().stats().InPktsInvalid, 1u);
  EXPECT_EQ(b.stats().rx_unverified, 1u);
  EXPECT_EQ(b.stats().rx_delivered, 0u);
}

TEST(MacsecLinkTest, ProtectFailureIsCounted) {
  SecYConfig c;
  c.sci = kSciA;
  MacsecLink a{SecY(c)};  // no transmit SA
  EXPECT_FALSE(a.protect(udp_frame("x")).has_value());
  EXPECT_EQ(a.stats().tx_protect_errors, 1u);
  EXPECT_TRUE(a.stats_json()["tx_sa"]["new_sa_needed"].get<bool>());
}

TEST(MacsecLinkTest, StatsJsonCarriesMibAndLinkCounters) {
  MacsecLink a(make(kSciA, kSciB, key(1), key(2)));
  ASSERT_TRUE(a.protect(udp_frame("x")).has_value());
  a.count_send(true);
  const auto j = a.stats_json();
  EXPECT_EQ(j["secy"]["OutPktsEncrypted"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["secy"]["InPktsNotValid"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(j["secy"].size(), 24u);  // 22 MIB counters + 2 PN persistence counters
  EXPECT_EQ(j["link"]["tx_sent"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(j["tx_sa"]["next_pn"].get<std::uint64_t>(), 2u);
  EXPECT_EQ(j["tx_sa"]["encoding_an"].get<int>(), 0);
}

// ---- simulated segment ----

struct SimPair {
  net::Simulator sim{7};
  net::Segment seg{sim};
  net::RecordingHook wire;
  net::SimHost a{sim, {.mac = kMacA, .ip = Ipv4Address::from_octets(10, 0, 0, 1)}};
  net::SimHost b{sim, {.mac = kMacB, .ip = Ipv4Address::from_octets(10, 0, 0, 2)}};
  SimPair() {
    seg.add_hook(&wire);
    EXPECT_TRUE(a.bind(4000, [](const net::UdpDatagram&) {}).ok());  // the sending port
  }
};

TEST(MacsecSimLinkTest, EndpointShimsCarryUdpAndOnlyMacsecCrossesTheSegment) {
  SimPair p;
  MacsecLink la(make(kSciA, kSciB, key(1), key(2)));
  MacsecLink lb(make(kSciB, kSciA, key(2), key(1)));
  auto sa = make_sim_shim(la);
  auto sb = make_sim_shim(lb);
  const auto pa = p.seg.add_port({}, &sa);
  const auto pb = p.seg.add_port({}, &sb);
  sa.connect(&p.seg.sender(pa), &p.a);
  sb.connect(&p.seg.sender(pb), &p.b);
  p.a.connect(&sa);
  p.b.connect(&sb);

  const std::string marker = "SIM-MARKER-0123456789";
  std::vector<std::string> got;
  ASSERT_TRUE(p.b.bind(5000, [&](const net::UdpDatagram& d) {
                 got.emplace_back(reinterpret_cast<const char*>(d.payload.data()), d.payload.size());
               }).ok());
  ASSERT_TRUE(p.a.send_to(4000, {p.b.config().ip, 5000},
                          ByteSpan(reinterpret_cast<const std::uint8_t*>(marker.data()), marker.size()))
                  .ok());
  p.sim.run_until_idle();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], marker);
  // ARP request, ARP reply and the datagram all crossed as MACsec.
  ASSERT_GE(p.wire.records().size(), 3u);
  for (const auto& r : p.wire.records()) {
    EXPECT_EQ(ether_type(r.frame), 0x88E5);
    EXPECT_FALSE(contains(r.frame, marker));
  }
  EXPECT_EQ(lb.stats().rx_delivered, lb.secy().stats().InPktsOK);
  EXPECT_GE(lb.stats().rx_delivered, 2u);
}

TEST(MacsecSimLinkTest, PeerWithWrongKeyGetsNothing) {
  SimPair p;
  MacsecLink la(make(kSciA, kSciB, key(1), key(2)));
  MacsecLink lb(make(kSciB, kSciA, key(2), key(5)));  // wrong receive key
  auto sa = make_sim_shim(la);
  auto sb = make_sim_shim(lb);
  const auto pa = p.seg.add_port({}, &sa);
  const auto pb = p.seg.add_port({}, &sb);
  sa.connect(&p.seg.sender(pa), &p.a);
  sb.connect(&p.seg.sender(pb), &p.b);
  p.a.connect(&sa);
  p.b.connect(&sb);
  int got = 0;
  ASSERT_TRUE(p.b.bind(5000, [&](const net::UdpDatagram&) { ++got; }).ok());
  const std::uint8_t payload[4] = {1, 2, 3, 4};
  ASSERT_TRUE(p.a.send_to(4000, {p.b.config().ip, 5000}, payload).ok());
  p.sim.run_until_idle();
  EXPECT_EQ(got, 0);
  EXPECT_EQ(lb.stats().rx_delivered, 0u);
  EXPECT_GE(lb.secy().stats().InPktsNotValid, 1u);
  EXPECT_EQ(sb.inbound_drops(), lb.secy().stats().InPktsNotValid);
}

TEST(MacsecSimLinkTest, SwitchPortProcessorsGiveHopByHopProtection) {
  // Host A --(SA link 1)--> switch --(SA link 2)--> host B. The switch holds
  // both links' keys: frames are clear inside it (what a hook sees) and
  // MACsec on each link.
  SimPair p;
  MacsecLink host_a(make(kSciA, kSciB, key(1), key(2)));
  MacsecLink sw_a(make(kSciB, kSciA, key(2), key(1)));   // switch end of link 1
  MacsecLink sw_b(make(kSciA, kSciB, key(3), key(4)));   // switch end of link 2
  MacsecLink host_b(make(kSciB, kSciA, key(4), key(3)));
  auto sa = make_sim_shim(host_a);
  auto sb = make_sim_shim(host_b);
  const auto pa = p.seg.add_port({}, &sa);
  const auto pb = p.seg.add_port({}, &sb);
  sa.connect(&p.seg.sender(pa), &p.a);
  sb.connect(&p.seg.sender(pb), &p.b);
  p.a.connect(&sa);
  p.b.connect(&sb);
  MacsecPortProcessor proc;
  proc.bind(pa, &sw_a);
  proc.bind(pb, &sw_b);
  p.seg.set_port_processor(pa, &proc);
  p.seg.set_port_processor(pb, &proc);

  std::string got;
  ASSERT_TRUE(p.b.bind(5000, [&](const net::UdpDatagram& d) {
                 got.assign(reinterpret_cast<const char*>(d.payload.data()), d.payload.size());
               }).ok());
  const std::string msg = "hop-by-hop";
  const ByteSpan msg_bytes(reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size());
  ASSERT_TRUE(p.a.send_to(4000, {p.b.config().ip, 5000}, msg_bytes).ok());
  p.sim.run_until_idle();
  EXPECT_EQ(got, msg);
  // Inside the switch (hooks run after port ingress processing) frames are clear.
  ASSERT_FALSE(p.wire.records().empty());
  for (const auto& r : p.wire.records()) EXPECT_NE(ether_type(r.frame), 0x88E5);
  EXPECT_GE(sw_a.secy().stats().InPktsOK, 2u);
  EXPECT_GE(host_b.secy().stats().InPktsOK, 2u);
}

// ---- TAP + AF_PACKET between two namespaces (root only) ----

TEST(MacsecTapLinkTest, UdpBetweenNamespacesOverTapLinks) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, TAP, AF_PACKET)";
  auto topo = net::NetnsTopology::pair("lsml");
  const auto& n0 = topo.node(0);
  const auto& n1 = topo.node(1);
  const Sci s0 = Sci::from_parts(n0.mac.bytes.data(), 1);
  const Sci s1 = Sci::from_parts(n1.mac.bytes.data(), 1);
  MacsecLink l0(make(s0, s1, key(1), key(2)));
  MacsecLink l1(make(s1, s0, key(2), key(1)));
  std::optional<TapLink> t0;
  std::optional<TapLink> t1;
  std::optional<net::UdpSocket> rx;
  std::optional<net::UdpSocket> tx;
  const auto ip0 = Ipv4Address::from_octets(10, 78, 0, 1);
  const auto ip1 = Ipv4Address::from_octets(10, 78, 0, 2);
  {
    net::NetnsScope scope(n0.netns);
    t0.emplace(TapLink::open(l0, {.lower = n0.interface, .name = "msec0"}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip0, 24).ok());
    auto s = net::UdpSocket::open({ip0, 0});
    ASSERT_TRUE(s.ok());
    tx.emplace(std::move(*s));
  }
  {
    net::NetnsScope scope(n1.netns);
    t1.emplace(TapLink::open(l1, {.lower = n1.interface, .name = "msec0"}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip1, 24).ok());
    auto s = net::UdpSocket::open({ip1, 6000});
    ASSERT_TRUE(s.ok());
    rx.emplace(std::move(*s));
  }
  EXPECT_EQ(t0->mtu(), t0->lower_mtu() - kMacsecOverhead);
  EXPECT_EQ(t0->mac(), n0.mac);

  MonotonicClock clock;
  net::EventLoop loop(clock);
  t0->attach(loop);
  t1->attach(loop);
  std::string got;
  loop.watch(rx->fd(), POLLIN, [&](short) {
    std::uint8_t buf[2048];
    auto r = rx->receive(buf);
    if (r.ok()) got.assign(reinterpret_cast<const char*>(buf), r->size);
  });
  const std::string msg = "through the user-space MACsec interface";
  auto sent = tx->send_to({ip1, 6000}, ByteSpan(reinterpret_cast<const std::uint8_t*>(msg.data()), msg.size()));
  ASSERT_TRUE(sent.ok());
  // The deadline only bounds a broken run; the loop ends when the datagram is in.
  EXPECT_TRUE(loop.run_until([&] { return !got.empty(); }, loop.now() + Duration::seconds(20)))
      << l0.stats_json().dump() << "\n" << l1.stats_json().dump();
  EXPECT_EQ(got, msg);
  EXPECT_GE(l1.secy().stats().InPktsOK, 2u);  // ARP request + datagram
  EXPECT_GE(l0.secy().stats().InPktsOK, 1u);  // ARP reply
  EXPECT_EQ(l1.stats().rx_delivered, l1.secy().stats().InPktsOK);
  t0->detach(loop);
  t1->detach(loop);
  loop.unwatch(rx->fd());
}

// A burst larger than a batch: the sending link reads the TAP in a loop and
// sends batches (sendmmsg), the receiving one receives batches (recvmmsg).
// Every datagram arrives once and in order, the PNs on the wire increase by
// one in wire order (taken at protect time, sent in that order), and a
// foreign frame on the veth in the middle is still counted (its header only
// crosses the socket filter).
TEST(MacsecTapLinkTest, BurstsCrossInBatchesInOrderWithPnsInWireOrder) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, TAP, AF_PACKET)";
  auto topo = net::NetnsTopology::pair("lsmb");
  const auto& n0 = topo.node(0);
  const auto& n1 = topo.node(1);
  const Sci s0 = Sci::from_parts(n0.mac.bytes.data(), 1);
  const Sci s1 = Sci::from_parts(n1.mac.bytes.data(), 1);
  MacsecLink l0(make(s0, s1, key(1), key(2)));
  MacsecLink l1(make(s1, s0, key(2), key(1)));
  std::optional<TapLink> t0, t1;
  std::optional<net::UdpSocket> rx, tx;
  std::optional<net::PacketSocket> wire, inject;
  const auto ip0 = Ipv4Address::from_octets(10, 78, 1, 1);
  const auto ip1 = Ipv4Address::from_octets(10, 78, 1, 2);
  {
    net::NetnsScope scope(n0.netns);
    t0.emplace(TapLink::open(l0, {.lower = n0.interface, .name = "msec0"}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip0, 24).ok());
    net::UdpSocketOptions so;
    so.nonblocking = false;
    auto s = net::UdpSocket::open({ip0, 0}, so);
    ASSERT_TRUE(s.ok());
    tx.emplace(std::move(*s));
    auto p = net::PacketSocket::open(n0.interface, net::kEtherTypeLocalExperimental1);
    ASSERT_TRUE(p.ok());
    inject.emplace(std::move(*p));
  }
  {
    net::NetnsScope scope(n1.netns);
    // B receives through its lower socket's ring (the recvmmsg path is in
    // UdpBetweenNamespacesOverTapLinks and the TCP stream test).
    t1.emplace(TapLink::open(l1, {.lower = n1.interface, .name = "msec0", .rx_ring = true}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip1, 24).ok());
    net::UdpSocketOptions so;
    so.receive_buffer = 4 << 20;
    auto s = net::UdpSocket::open({ip1, 6000}, so);
    ASSERT_TRUE(s.ok());
    rx.emplace(std::move(*s));
    // Every frame arriving on B's veth end, in wire order.
    auto w = net::PacketSocket::open(n1.interface, net::kEtherTypeAll);
    ASSERT_TRUE(w.ok());
    wire.emplace(std::move(*w));
    wire->set_receive_buffer(8 << 20);
  }
  MonotonicClock clock;
  net::EventLoop loop(clock);
  t0->attach(loop);
  t1->attach(loop);
  std::vector<std::uint32_t> got;
  loop.watch(rx->fd(), POLLIN, [&](short) {
    std::uint8_t buf[2048];
    for (;;) {
      auto r = rx->receive(buf);
      if (!r.ok()) break;
      if (r->size == 200) got.push_back(load_be32(buf));
    }
  });
  // ARP first (one datagram through), then the burst queued on the TAP
  // before the loop runs again.
  std::uint8_t payload[200] = {};
  const auto send = [&](std::uint32_t seq) {
    store_be32(payload, seq);
    return tx->send_to({ip1, 6000}, ByteSpan(payload, sizeof payload)).ok();
  };
  ASSERT_TRUE(send(0));
  ASSERT_TRUE(loop.run_until([&] { return got.size() == 1; }, loop.now() + Duration::seconds(20)));
  constexpr std::uint32_t kBurst = 150;
  for (std::uint32_t i = 1; i <= kBurst; ++i) {
    ASSERT_TRUE(send(i));
    if (i == kBurst / 2) {
      std::vector<std::uint8_t> foreign(64, 0x42);
      std::copy(n1.mac.bytes.begin(), n1.mac.bytes.end(), foreign.begin());
      std::copy(n0.mac.bytes.begin(), n0.mac.bytes.end(), foreign.begin() + 6);
      store_be16(foreign.data() + 12, net::kEtherTypeLocalExperimental1);
      ASSERT_TRUE(inject->send(foreign).ok());
    }
  }
  EXPECT_TRUE(loop.run_until([&] { return got.size() == kBurst + 1; }, loop.now() + Duration::seconds(20)));
  ASSERT_EQ(got.size(), kBurst + 1);
  for (std::uint32_t i = 0; i <= kBurst; ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(l0.stats().tx_sent, l0.stats().tx_frames);
  EXPECT_EQ(l0.stats().tx_send_errors, 0u);
  EXPECT_EQ(l1.stats().rx_delivered, l1.secy().stats().InPktsOK);
  EXPECT_EQ(l1.stats().rx_not_macsec, 1u);  // the injected frame's head, through the receive ring
  EXPECT_TRUE(t1->rx_ring());
  EXPECT_EQ(l1.stats().rx_ring_drops, 0u);
  EXPECT_EQ(l1.secy().stats().InPktsLate, 0u);
  // A's secure frames on B's veth: PNs 1, 2, 3, ... in wire order.
  std::vector<std::uint8_t> buf(2048);
  std::uint32_t expect_pn = 1;
  std::size_t secure = 0;
  for (;;) {
    auto n = wire->receive(buf);
    if (!n.ok()) break;
    if (*n < 20 || ether_type(ByteSpan(buf.data(), *n)) != kMacsecEtherType) continue;
    if (std::memcmp(buf.data() + 6, n0.mac.bytes.data(), 6) != 0) continue;
    EXPECT_EQ(load_be32(buf.data() + 16), expect_pn);
    ++expect_pn;
    ++secure;
  }
  EXPECT_EQ(secure, l0.stats().tx_sent);
  t0->detach(loop);
  t1->detach(loop);
  loop.unwatch(rx->fd());
}

// A TCP stream (1 MiB, one connection) from A to B through two links, with
// and without the TAP offloads. The bytes arrive intact and in order either
// way. With offloads A's TAP hands over segments of several MSS that the
// link splits (tx_gso_reads), B joins verified segments before its TAP
// (rx_gro_writes), and nothing is refused; without them neither happens.
void tcp_stream_over_links(bool offload, bool rx_ring = false) {
  SCOPED_TRACE(offload ? "offload on" : "offload off");
  SCOPED_TRACE(rx_ring ? "rx ring on" : "rx ring off");
  auto topo = net::NetnsTopology::pair("lsmt");
  const auto& n0 = topo.node(0);
  const auto& n1 = topo.node(1);
  const Sci s0 = Sci::from_parts(n0.mac.bytes.data(), 1);
  const Sci s1 = Sci::from_parts(n1.mac.bytes.data(), 1);
  MacsecLink l0(make(s0, s1, key(1), key(2)));
  MacsecLink l1(make(s1, s0, key(2), key(1)));
  std::optional<TapLink> t0, t1;
  const auto ip0 = Ipv4Address::from_octets(10, 78, 2, 1);
  const auto ip1 = Ipv4Address::from_octets(10, 78, 2, 2);
  net::UniqueFd listener, client, server;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(7000);
  to.sin_addr.s_addr = htonl(ip1.value);
  {
    net::NetnsScope scope(n1.netns);
    t1.emplace(TapLink::open(l1, {.lower = n1.interface, .name = "msec0", .offload = offload, .rx_ring = rx_ring}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip1, 24).ok());
    listener.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(listener.valid());
    ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
    ASSERT_EQ(::listen(listener.get(), 1), 0);
  }
  {
    net::NetnsScope scope(n0.netns);
    t0.emplace(TapLink::open(l0, {.lower = n0.interface, .name = "msec0", .offload = offload, .rx_ring = rx_ring}));
    ASSERT_TRUE(net::set_interface_ipv4("msec0", ip0, 24).ok());
    client.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(client.valid());
    const int c = ::connect(client.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to);
    ASSERT_TRUE(c == 0 || errno == EINPROGRESS);
  }
  EXPECT_EQ(t0->tcp_offload(), offload);
  EXPECT_EQ(t1->rx_ring(), rx_ring);
  MonotonicClock clock;
  net::EventLoop loop(clock);
  t0->attach(loop);
  t1->attach(loop);
  std::vector<std::uint8_t> data(1 << 20);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 131 + (i >> 11));
  std::vector<std::uint8_t> got;
  std::size_t sent = 0;
  loop.watch(listener.get(), POLLIN, [&](short) {
    server.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!server.valid()) return;
    loop.watch(server.get(), POLLIN, [&](short) {
      std::uint8_t buf[65536];
      for (;;) {
        const ssize_t n = ::read(server.get(), buf, sizeof buf);
        if (n <= 0) break;
        got.insert(got.end(), buf, buf + n);
      }
    });
  });
  loop.watch(client.get(), POLLOUT, [&](short) {
    while (sent < data.size()) {
      const ssize_t n = ::write(client.get(), data.data() + sent, data.size() - sent);
      if (n <= 0) break;
      sent += static_cast<std::size_t>(n);
    }
    if (sent == data.size()) loop.unwatch(client.get());
  });
  // The deadline only bounds a broken run; the loop ends when every byte is in.
  EXPECT_TRUE(loop.run_until([&] { return got.size() >= data.size(); }, loop.now() + Duration::seconds(60)))
      << got.size() << " of " << data.size() << "\n" << l0.stats_json().dump() << "\n" << l1.stats_json().dump();
  EXPECT_TRUE(got == data) << "the stream arrived changed";
  for (const MacsecLink* l : {&l0, &l1}) {
    EXPECT_EQ(l->stats().tx_offload_errors, 0u);
    EXPECT_EQ(l->stats().rx_delivered, l->secy().stats().InPktsOK);
    EXPECT_EQ(l->secy().stats().InPktsNotValid + l->secy().stats().InPktsLate, 0u);
  }
  if (offload) {
    EXPECT_GT(l0.stats().tx_gso_reads, 0u) << "A's TAP never handed over a segment of several MSS";
    EXPECT_GT(l0.stats().tx_gso_segments, l0.stats().tx_gso_reads);
    EXPECT_GT(l1.stats().rx_gro_writes, 0u) << "B never joined segments";
    EXPECT_GT(l1.stats().rx_gro_segments, l1.stats().rx_gro_writes);
  } else {
    EXPECT_EQ(l0.stats().tx_gso_reads, 0u);
    EXPECT_EQ(l1.stats().rx_gro_writes, 0u);
  }
  if (server.valid()) loop.unwatch(server.get());
  loop.unwatch(listener.get());
  if (sent < data.size()) loop.unwatch(client.get());
  t0->detach(loop);
  t1->detach(loop);
}

TEST(MacsecTapLinkTest, TcpStreamCrossesAsSplitAndJoinedSegments) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, TAP, AF_PACKET)";
  tcp_stream_over_links(true);
  tcp_stream_over_links(false);
  tcp_stream_over_links(true, /*rx_ring=*/true);  // the lower socket's receive ring
}

}  // namespace
}  // namespace layersec::macsec
