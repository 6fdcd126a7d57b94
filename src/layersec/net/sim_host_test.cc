#include "layersec/net/sim_host.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "layersec/net/sim_attack.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

Ipv4Address ip4(std::uint8_t last) { return Ipv4Address::from_octets(10, 0, 0, last); }
const Ipv4Address kGroup = Ipv4Address::from_octets(239, 255, 0, 1);

struct Received {
  Ipv4Endpoint src;
  Ipv4Endpoint dst;
  std::string payload;
  TimePoint time;
};

SimHostConfig host_config(std::uint8_t n) {
  SimHostConfig c;
  c.mac = MacAddress::local(n);
  c.ip = ip4(n);
  return c;
}

struct Net {
  Simulator sim{3};
  Segment seg{sim};
  std::vector<std::unique_ptr<SimHost>> hosts;
  std::vector<std::vector<Received>> inbox;

  explicit Net(int n, bool dynamic_arp = true) {
    inbox.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      auto cfg = host_config(static_cast<std::uint8_t>(i + 1));
      cfg.dynamic_arp = dynamic_arp;
      hosts.push_back(std::make_unique<SimHost>(sim, cfg));
      hosts.back()->attach(seg);
    }
  }
  SimHost& h(int i) { return *hosts[static_cast<std::size_t>(i)]; }
  void listen(int i, std::uint16_t port) {
    auto& box = inbox[static_cast<std::size_t>(i)];
    ASSERT_TRUE(h(i).bind(port, [this, &box](const UdpDatagram& d) {
                      box.push_back({d.src, d.dst, std::string(d.payload.begin(), d.payload.end()), sim.now()});
                    }).ok());
  }
  void static_arp() {
    for (auto& a : hosts)
      for (auto& b : hosts) a->add_static_arp(b->config().ip, b->config().mac);
  }
};

ByteSpan text(const char* s) { return ByteSpan(reinterpret_cast<const std::uint8_t*>(s), std::strlen(s)); }

TEST(SimHostTest, UnicastWithStaticArp) {
  Net n(2, false);
  n.static_arp();
  n.listen(0, 30501);
  n.listen(1, 30509);
  ASSERT_TRUE(n.h(0).send_to(30501, {ip4(2), 30509}, text("hello")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[1].size(), 1u);
  EXPECT_EQ(n.inbox[1][0].payload, "hello");
  EXPECT_EQ(n.inbox[1][0].src, (Ipv4Endpoint{ip4(1), 30501}));
  EXPECT_EQ(n.inbox[1][0].dst, (Ipv4Endpoint{ip4(2), 30509}));
  EXPECT_EQ(n.h(0).stats().arp_requests_sent, 0u);
  EXPECT_EQ(n.h(1).stats().rx_udp, 1u);
}

TEST(SimHostTest, DynamicArpResolvesAndQueues) {
  Net n(3);
  n.listen(0, 1000);
  n.listen(1, 2000);
  ASSERT_TRUE(n.h(0).send_to(1000, {ip4(2), 2000}, text("one")).ok());
  ASSERT_TRUE(n.h(0).send_to(1000, {ip4(2), 2000}, text("two")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[1].size(), 2u);
  EXPECT_EQ(n.inbox[1][0].payload, "one");
  EXPECT_EQ(n.inbox[1][1].payload, "two");
  EXPECT_EQ(n.h(0).stats().arp_requests_sent, 1u);
  EXPECT_EQ(n.h(1).stats().arp_replies_sent, 1u);
  EXPECT_EQ(n.h(0).arp_lookup(ip4(2)), MacAddress::local(2));
  EXPECT_EQ(n.h(1).arp_lookup(ip4(1)), MacAddress::local(1));  // learned from the request
  EXPECT_FALSE(n.h(2).arp_lookup(ip4(1)).has_value());          // not targeted: not learned
  // The retry timer was cancelled on resolution: time stopped at the last frame.
  EXPECT_LT(n.sim.now() - TimePoint{}, Duration::milliseconds(1));
  // The reply is answered without another request.
  ASSERT_TRUE(n.h(1).send_to(2000, n.inbox[1][0].src, text("back")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[0].size(), 1u);
  EXPECT_EQ(n.inbox[0][0].payload, "back");
  EXPECT_EQ(n.h(1).stats().arp_requests_sent, 0u);
}

TEST(SimHostTest, UnresolvedNeighbourIsDroppedAndCounted) {
  Net n(2);
  n.listen(0, 1000);
  ASSERT_TRUE(n.h(0).send_to(1000, {ip4(99), 2000}, text("lost")).ok());
  n.sim.run_until_idle();
  EXPECT_EQ(n.h(0).stats().arp_requests_sent, 3u);
  EXPECT_EQ(n.h(0).stats().arp_unresolved_drops, 1u);
  EXPECT_GE(n.sim.now() - TimePoint{}, Duration::milliseconds(300));
}

TEST(SimHostTest, MulticastReachesMembersOnly) {
  Net n(4);
  for (int i = 0; i < 4; ++i) n.listen(i, 30490);
  n.h(1).join_group(kGroup);
  n.h(2).join_group(kGroup);
  ASSERT_TRUE(n.h(0).send_to(30490, {kGroup, 30490}, text("offer")).ok());
  n.sim.run_until_idle();
  EXPECT_TRUE(n.inbox[0].empty());  // no loopback by default
  ASSERT_EQ(n.inbox[1].size(), 1u);
  ASSERT_EQ(n.inbox[2].size(), 1u);
  EXPECT_TRUE(n.inbox[3].empty());
  EXPECT_EQ(n.inbox[1][0].dst, (Ipv4Endpoint{kGroup, 30490}));
  EXPECT_EQ(n.h(3).stats().rx_not_for_us, 1u);  // MAC filter
  EXPECT_EQ(n.seg.stats().flooded, 1u);
  n.h(2).leave_group(kGroup);
  ASSERT_TRUE(n.h(0).send_to(30490, {kGroup, 30490}, text("again")).ok());
  n.sim.run_until_idle();
  EXPECT_EQ(n.inbox[1].size(), 2u);
  EXPECT_EQ(n.inbox[2].size(), 1u);
}

TEST(SimHostTest, MulticastLoopbackWhenConfigured) {
  Simulator sim;
  Segment seg(sim);
  auto cfg = host_config(1);
  cfg.multicast_loopback = true;
  SimHost h(sim, cfg);
  h.attach(seg);
  int got = 0;
  ASSERT_TRUE(h.bind(30490, [&](const UdpDatagram& d) { got += d.dst.address == kGroup ? 1 : 0; }).ok());
  h.join_group(kGroup);
  ASSERT_TRUE(h.send_to(30490, {kGroup, 30490}, text("x")).ok());
  sim.run_until_idle();
  EXPECT_EQ(got, 1);
}

TEST(SimHostTest, BroadcastAndErrors) {
  Net n(3, false);
  for (int i = 0; i < 3; ++i) n.listen(i, 7);
  ASSERT_TRUE(n.h(0).send_to(7, {Ipv4Address::broadcast(), 7}, text("all")).ok());
  ASSERT_TRUE(n.h(0).send_to(7, {Ipv4Address::from_octets(10, 0, 0, 255), 7}, text("subnet")).ok());
  n.sim.run_until_idle();
  EXPECT_EQ(n.inbox[1].size(), 2u);
  EXPECT_EQ(n.inbox[2].size(), 2u);

  EXPECT_EQ(n.h(0).bind(7, [](const UdpDatagram&) {}).error(), SimHostError::kPortInUse);
  EXPECT_EQ(n.h(0).send_to(8, {ip4(2), 7}, text("x")).error(), SimHostError::kNotBound);
  EXPECT_EQ(n.h(0).send_to(7, {ip4(2), 7}, text("x")).error(), SimHostError::kUnresolved);  // no ARP
  Bytes big(kMaxUdpPayload + 1);
  EXPECT_EQ(n.h(0).send_to(7, {Ipv4Address::broadcast(), 7}, big).error(), SimHostError::kPayloadTooLarge);
  big.pop_back();
  EXPECT_TRUE(n.h(0).send_to(7, {Ipv4Address::broadcast(), 7}, big).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[1].size(), 3u);
  EXPECT_EQ(n.inbox[1][2].payload.size(), kMaxUdpPayload);
  SimHost lone(n.sim, host_config(9));
  ASSERT_TRUE(lone.bind(1, [](const UdpDatagram&) {}).ok());
  EXPECT_EQ(lone.send_to(1, {Ipv4Address::broadcast(), 1}, text("x")).error(), SimHostError::kNotConnected);
}

TEST(SimHostTest, NoListenerAndHandlerUnbindingItself) {
  Net n(2, false);
  n.static_arp();
  n.listen(0, 1);
  int calls = 0;
  ASSERT_TRUE(n.h(1).bind(5, [&](const UdpDatagram&) {
                      ++calls;
                      n.h(1).unbind(5);
                    }).ok());
  ASSERT_TRUE(n.h(0).send_to(1, {ip4(2), 5}, text("a")).ok());
  ASSERT_TRUE(n.h(0).send_to(1, {ip4(2), 5}, text("b")).ok());
  ASSERT_TRUE(n.h(0).send_to(1, {ip4(2), 6}, text("c")).ok());
  n.sim.run_until_idle();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(n.h(1).stats().rx_no_listener, 2u);
}

TEST(SimHostTest, OwnAddressLoopsBackAndRawEtherTypes) {
  Net n(2, false);
  n.listen(0, 9);
  ASSERT_TRUE(n.h(0).send_to(9, {ip4(1), 9}, text("self")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[0].size(), 1u);
  EXPECT_EQ(n.inbox[0][0].payload, "self");
  EXPECT_EQ(n.seg.stats().frames_in, 0u);  // never on the link

  // Raw Sampled Values frames share the port with UDP.
  std::vector<Bytes> sv;
  ASSERT_TRUE(n.h(1).bind_ether_type(kEtherTypeSv, [&](ByteSpan f) { sv.emplace_back(f.begin(), f.end()); }).ok());
  EXPECT_EQ(n.h(1).bind_ether_type(kEtherTypeSv, [](ByteSpan) {}).error(), SimHostError::kPortInUse);
  EXPECT_EQ(n.h(1).bind_ether_type(kEtherTypeIpv4, [](ByteSpan) {}).error(), SimHostError::kPortInUse);
  Bytes frame(60, 0);
  const MacAddress sv_group{{0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01}};
  std::copy(sv_group.bytes.begin(), sv_group.bytes.end(), frame.begin());
  const MacAddress mac1 = MacAddress::local(1);
  const MacAddress mac2 = MacAddress::local(2);
  std::copy(mac1.bytes.begin(), mac1.bytes.end(), frame.begin() + 6);
  store_be16(frame.data() + 12, kEtherTypeSv);
  // Group MACs other than joined IPv4 groups are filtered like on a NIC, so
  // the SV subscriber's host sees a unicast copy here.
  ASSERT_TRUE(n.h(0).send_frame(frame).ok());
  std::copy(mac2.bytes.begin(), mac2.bytes.end(), frame.begin());
  ASSERT_TRUE(n.h(0).send_frame(frame).ok());
  store_be16(frame.data() + 12, 0x88B8);  // GOOSE: nobody bound
  ASSERT_TRUE(n.h(0).send_frame(frame).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(sv.size(), 1u);
  EXPECT_EQ(load_be16(sv[0].data() + 12), kEtherTypeSv);
  EXPECT_EQ(n.h(1).stats().rx_raw, 1u);
  EXPECT_EQ(n.h(1).stats().rx_other_type, 1u);
  EXPECT_EQ(n.h(1).stats().rx_not_for_us, 1u);
}

TEST(SimHostTest, HostsBehindFrameShims) {
  // Each host scrambles everything after the Ethernet header through a shim
  // (a stand-in for an endpoint SecY); the segment and its taps see only
  // scrambled frames, the hosts talk normally.
  Simulator sim;
  Segment seg(sim);
  auto scramble = [](std::vector<std::uint8_t>& f) {
    if (f.size() > 14 && f[14] == 0xFF) return false;  // "fails verification"
    for (std::size_t i = 14; i < f.size(); ++i) f[i] ^= 0x5A;
    return true;
  };
  FrameShim shim_a(scramble, scramble), shim_b(scramble, scramble);
  SimHost a(sim, host_config(1)), b(sim, host_config(2));
  const PortId pa = seg.add_port({}, &shim_a);
  const PortId pb = seg.add_port({}, &shim_b);
  shim_a.connect(&seg.sender(pa), &a);
  shim_b.connect(&seg.sender(pb), &b);
  a.connect(&shim_a);
  b.connect(&shim_b);
  RecordingHook spy;
  seg.add_hook(&spy);
  std::vector<std::string> got;
  ASSERT_TRUE(b.bind(2, [&](const UdpDatagram& d) {
                 got.emplace_back(d.payload.begin(), d.payload.end());
                 ASSERT_TRUE(b.send_to(2, d.src, d.payload).ok());
               }).ok());
  ASSERT_TRUE(a.bind(1, [&](const UdpDatagram& d) { got.emplace_back(d.payload.begin(), d.payload.end()); }).ok());
  ASSERT_TRUE(a.send_to(1, {ip4(2), 2}, text("through shims")).ok());  // with dynamic ARP
  sim.run_until_idle();
  EXPECT_EQ(got, (std::vector<std::string>{"through shims", "through shims"}));
  ASSERT_FALSE(spy.records().empty());
  for (const auto& r : spy.records()) {
    auto eth = parse_ethernet(r.frame);
    ASSERT_TRUE(eth.ok());
    // Headers after the EtherType are scrambled: neither ARP nor IPv4 parses.
    if (eth->header.ether_type == kEtherTypeArp)
      EXPECT_FALSE(parse_arp(eth->payload).ok());
    else
      EXPECT_FALSE(parse_udp_frame(r.frame).ok());
  }
  // An inbound frame the shim rejects never reaches the host.
  Bytes bad(60, 0);
  const MacAddress mac_b = MacAddress::local(2);
  std::copy(mac_b.bytes.begin(), mac_b.bytes.end(), bad.begin());
  bad[12] = 0x08;
  bad[14] = 0xFF;
  seg.inject(pa, bad);
  sim.run_until_idle();
  EXPECT_EQ(shim_b.inbound_drops(), 1u);
  seg.remove_hook(&spy);
}

TEST(SimHostTest, RequestResponsePingPongTiming) {
  Simulator sim;
  Segment seg(sim);
  LinkConfig link;
  link.latency = Duration::microseconds(5);
  link.bandwidth_bps = 1'000'000'000;
  SimHost client(sim, host_config(1));
  SimHost server(sim, host_config(2));
  client.attach(seg, link);
  server.attach(seg, link);
  client.add_static_arp(ip4(2), MacAddress::local(2));
  server.add_static_arp(ip4(1), MacAddress::local(1));
  ASSERT_TRUE(server.bind(30509, [&](const UdpDatagram& d) {
                      ASSERT_TRUE(server.send_to(30509, d.src, d.payload).ok());
                    }).ok());
  std::vector<TimePoint> replies;
  ASSERT_TRUE(client.bind(30501, [&](const UdpDatagram&) { replies.push_back(sim.now()); }).ok());
  const Bytes payload(100, 0x5A);
  ASSERT_TRUE(client.send_to(30501, {ip4(2), 30509}, payload).ok());
  sim.run_until_idle();
  ASSERT_EQ(replies.size(), 1u);
  // 142-byte frame = 166 wire bytes = 1328 ns at 1 Gbit/s; four link
  // traversals each with 5 us latency.
  EXPECT_EQ(replies[0].ns(), 4 * (1328 + 5000));
}

TEST(SimHostTest, TaggedHostAndTamperedFrames) {
  Net n(2, false);
  n.static_arp();
  n.listen(0, 1);
  n.listen(1, 2);
  RecordingHook spy(match_udp_dst_port(2));
  BitFlipHook flip({1.0, 42 + 4, 1, false}, 5);  // payload bytes of a tagged frame
  n.seg.add_hook(&spy);
  auto cfg = host_config(9);
  cfg.vlan = VlanTag{kEtherTypeCTag, 6, false, 42};
  SimHost tagged(n.sim, cfg);
  tagged.attach(n.seg);
  tagged.add_static_arp(ip4(2), MacAddress::local(2));
  ASSERT_TRUE(tagged.bind(3, [](const UdpDatagram&) {}).ok());
  ASSERT_TRUE(tagged.send_to(3, {ip4(2), 2}, text("tagged payload")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(spy.records().size(), 1u);
  auto v = parse_udp_frame(spy.records()[0].frame);
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->ethernet.tag_count, 1);
  EXPECT_EQ(v->ethernet.tags[0].vid, 42);
  EXPECT_EQ(v->ethernet.tags[0].pcp, 6);
  ASSERT_EQ(n.inbox[1].size(), 1u);

  // A flipped payload bit fails the UDP checksum: dropped as malformed.
  n.seg.add_hook(&flip);
  ASSERT_TRUE(tagged.send_to(3, {ip4(2), 2}, text("tagged payload")).ok());
  n.sim.run_until_idle();
  EXPECT_EQ(n.inbox[1].size(), 1u);
  EXPECT_EQ(n.h(1).stats().rx_malformed, 1u);
  n.seg.remove_hook(&flip);

  // With checksums refreshed the tampered payload is delivered: only an
  // end-to-end MAC (SecOC) could catch it.
  BitFlipHook stealthy({1.0, 42 + 4, 1, true}, 5);
  n.seg.add_hook(&stealthy);
  ASSERT_TRUE(tagged.send_to(3, {ip4(2), 2}, text("tagged payload")).ok());
  n.sim.run_until_idle();
  ASSERT_EQ(n.inbox[1].size(), 2u);
  EXPECT_NE(n.inbox[1][1].payload, "tagged payload");
  EXPECT_EQ(stealthy.modified(), 1u);
  n.seg.remove_hook(&stealthy);
  n.seg.remove_hook(&spy);
}

}  // namespace
}  // namespace layersec::net
