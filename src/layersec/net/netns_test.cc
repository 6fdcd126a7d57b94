// Tests over real kernel networking in network namespaces this test creates
// and deletes itself: UDP unicast and multicast, AF_PACKET frames over veth,
// a live capture, and a TAP device. They need root; without it they skip and
// say why. Waits are bounded (poll with a generous limit) so a broken setup
// fails instead of hanging; nothing is asserted about how long things take.
#include <gtest/gtest.h>
#include <net/if.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "layersec/base/hex.h"
#include "layersec/net/interface.h"
#include "layersec/net/netns.h"
#include "layersec/net/packet_socket.h"
#include "layersec/net/pcap.h"
#include "layersec/net/socket_filter.h"
#include "layersec/net/tap.h"
#include "layersec/net/udp_socket.h"

namespace layersec::net {
namespace {

using Bytes = std::vector<std::uint8_t>;

#define REQUIRE_NETNS()                                         \
  do {                                                          \
    std::string reason;                                         \
    if (!netns_available(&reason)) GTEST_SKIP() << reason;      \
  } while (0)

constexpr int kWaitMs = 5000;

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, kWaitMs) == 1;
}

UdpSocket open_udp_in(const std::string& ns, Ipv4Endpoint local, const UdpSocketOptions& o = {}) {
  NetnsScope scope(ns);
  int err = 0;
  auto s = UdpSocket::open(local, o, &err);
  EXPECT_TRUE(s.ok()) << errno_text(err);
  if (!s.ok()) throw std::runtime_error("socket");
  return std::move(s).value();
}

// Receives datagrams until one arrives (or the wait limit passes).
std::optional<std::pair<ReceivedDatagram, std::string>> receive_one(UdpSocket& s) {
  Bytes buf(2048);
  while (readable(s.fd())) {
    auto d = s.receive(buf);
    if (d.ok()) return std::make_pair(*d, std::string(buf.begin(), buf.begin() + static_cast<long>(d->size)));
    if (d.error() != IoError::kWouldBlock) return std::nullopt;
  }
  return std::nullopt;
}

bool namespace_listed(const std::string& name) {
  std::string out;
  run_command({"ip", "netns", "list"}, &out);
  return out.find(name + " ") != std::string::npos || out.find(name + "\n") != std::string::npos;
}

ByteSpan text(const std::string& s) { return ByteSpan(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }

TEST(NetnsTest, TopologyIsBuiltAndTornDown) {
  REQUIRE_NETNS();
  std::vector<std::string> names;
  {
    auto t = NetnsTopology::star(3, "lsnt");
    names = t.namespaces();
    ASSERT_EQ(names.size(), 4u);  // hub + 3 nodes
    for (const auto& n : names) {
      EXPECT_NE(n.find(std::to_string(::getpid())), std::string::npos);
      EXPECT_TRUE(namespace_listed(n)) << n;
    }
    std::string out;
    EXPECT_EQ(t.exec(0, {"ip", "-o", "-4", "addr", "show", "dev", "eth0"}, &out), 0);
    EXPECT_NE(out.find("10.77.0.1/24"), std::string::npos) << out;
    // Node 0 reaches node 2 across the bridge.
    UdpSocket s0 = open_udp_in(t.node(0).netns, {t.node(0).ip, 0});
    UdpSocket s2 = open_udp_in(t.node(2).netns, {t.node(2).ip, 7000});
    ASSERT_TRUE(s0.send_to(s2.local_endpoint(), text("across the hub")).ok());
    auto got = receive_one(s2);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->second, "across the hub");
  }
  for (const auto& n : names) EXPECT_FALSE(namespace_listed(n)) << n;
}

TEST(NetnsTest, ProcessesRunInsideNodeNamespaces) {
  REQUIRE_NETNS();
  auto t = NetnsTopology::pair("lsnx");
  auto child = t.spawn(1, {"sleep", "30"});
  ASSERT_TRUE(child.running());
  EXPECT_TRUE(process_in_netns(child.pid(), t.node(1).netns));
  EXPECT_FALSE(process_in_netns(child.pid(), t.node(0).netns));
  EXPECT_FALSE(process_in_netns(::getpid(), t.node(1).netns));
  std::string pids;
  ASSERT_EQ(run_command({"ip", "netns", "pids", t.node(1).netns}, &pids), 0);
  EXPECT_NE(pids.find(std::to_string(child.pid())), std::string::npos) << pids;
  pids.clear();
  ASSERT_EQ(run_command({"ip", "netns", "pids", t.node(0).netns}, &pids), 0);
  EXPECT_EQ(pids.find(std::to_string(child.pid())), std::string::npos) << pids;
  EXPECT_EQ(child.terminate(), 128 + SIGTERM);
}

TEST(NetnsTest, UdpUnicastAndMulticastBetweenTwoNamespaces) {
  REQUIRE_NETNS();
  auto t = NetnsTopology::pair("lsnu");
  const NetnsNode& a = t.node(0);
  const NetnsNode& b = t.node(1);
  UdpSocketOptions oa;
  oa.multicast_interface = a.ip;
  UdpSocket sa = open_udp_in(a.netns, {a.ip, 30501}, oa);
  UdpSocket sb = open_udp_in(b.netns, {Ipv4Address::any(), 30490});

  // Unicast both ways.
  ASSERT_TRUE(sa.send_to({b.ip, 30490}, text("request")).ok());
  auto got = receive_one(sb);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->second, "request");
  EXPECT_EQ(got->first.src, (Ipv4Endpoint{a.ip, 30501}));
  EXPECT_EQ(got->first.dst, b.ip);
  ASSERT_TRUE(sb.send_to(got->first.src, text("response")).ok());
  auto back = receive_one(sa);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->second, "response");
  EXPECT_EQ(back->first.src, (Ipv4Endpoint{b.ip, 30490}));

  // Multicast: B joins on its veth (by interface index, looked up inside B).
  const Ipv4Address group = Ipv4Address::from_octets(239, 255, 0, 1);
  int ifindex = 0;
  {
    NetnsScope scope(b.netns);
    ifindex = static_cast<int>(if_nametoindex(b.interface.c_str()));
  }
  ASSERT_GT(ifindex, 0);
  ASSERT_TRUE(sb.join_group_on(group, ifindex).ok()) << errno_text(sb.last_errno());
  ASSERT_TRUE(sa.send_to({group, 30490}, text("offer")).ok()) << errno_text(sa.last_errno());
  auto mc = receive_one(sb);
  ASSERT_TRUE(mc.has_value());
  EXPECT_EQ(mc->second, "offer");
  EXPECT_EQ(mc->first.dst, group);
  EXPECT_EQ(mc->first.interface_index, ifindex);
  ASSERT_TRUE(sb.leave_group_on(group, ifindex).ok()) << errno_text(sb.last_errno());
  EXPECT_FALSE(sb.leave_group_on(group, ifindex).ok());  // no longer a member
}

TEST(NetnsTest, MulticastAcrossStarReachesMembersOnly) {
  REQUIRE_NETNS();
  auto t = NetnsTopology::star(3, "lsnm");
  const Ipv4Address group = Ipv4Address::from_octets(239, 1, 2, 3);
  UdpSocketOptions o;
  o.multicast_interface = t.node(0).ip;
  UdpSocket sender = open_udp_in(t.node(0).netns, {t.node(0).ip, 0}, o);
  UdpSocket member = open_udp_in(t.node(1).netns, {Ipv4Address::any(), 40000});
  UdpSocket other = open_udp_in(t.node(2).netns, {Ipv4Address::any(), 40000});
  ASSERT_TRUE(member.join_group(group, t.node(1).ip).ok()) << errno_text(member.last_errno());
  ASSERT_TRUE(sender.send_to({group, 40000}, text("event")).ok());
  auto got = receive_one(member);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->second, "event");
  // The non-member's socket got nothing (the frame reached its NIC, the
  // kernel dropped it); by now the member's copy has long been delivered.
  Bytes buf(64);
  auto none = other.receive(buf);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error(), IoError::kWouldBlock);
}

struct FrameLog final : FrameRecorder {
  void record(TimePoint, ByteSpan f) override { frames.emplace_back(f.begin(), f.end()); }
  std::vector<Bytes> frames;
};

Bytes test_frame(const MacAddress& dst, const MacAddress& src, std::uint16_t ether_type, const std::string& body) {
  Bytes f(kEthernetHeaderSize);
  std::copy(dst.bytes.begin(), dst.bytes.end(), f.begin());
  std::copy(src.bytes.begin(), src.bytes.end(), f.begin() + 6);
  store_be16(f.data() + 12, ether_type);
  f.insert(f.end(), body.begin(), body.end());
  if (f.size() < kEthernetMinFrameSize) f.resize(kEthernetMinFrameSize, 0);
  return f;
}

// Reads frames until one satisfies `want` or the wait limit passes.
template <class Pred>
std::optional<Bytes> receive_frame(PacketSocket& s, Pred want) {
  Bytes buf(kEthernetMaxFrameSize + 4);
  while (readable(s.fd())) {
    auto n = s.receive(buf);
    if (!n.ok()) {
      if (n.error() == IoError::kWouldBlock) continue;
      return std::nullopt;
    }
    Bytes f(buf.begin(), buf.begin() + static_cast<long>(*n));
    if (want(f)) return f;
  }
  return std::nullopt;
}

// A non-blocking packet socket on node n's veth end, opened in its namespace.
PacketSocket open_in(const NetnsNode& n, std::uint16_t type) {
  NetnsScope scope(n.netns);
  int err = 0;
  auto s = PacketSocket::open(n.interface, type, true, &err);
  if (!s.ok()) throw std::runtime_error("packet socket: " + errno_text(err));
  return std::move(s).value();
}

TEST(NetnsTest, PacketSocketFramesOverVeth) {
  REQUIRE_NETNS();
  auto t = NetnsTopology::pair("lsnp");
  const NetnsNode& a = t.node(0);
  const NetnsNode& b = t.node(1);
  PacketSocket pa = open_in(a, kEtherTypeLocalExperimental1);
  PacketSocket pb = open_in(b, kEtherTypeLocalExperimental1);
  PacketSocket pb_all = open_in(b, kEtherTypeAll);
  EXPECT_EQ(pa.interface_mac(), a.mac);
  std::optional<LiveCapture> capture;
  {
    NetnsScope scope(b.netns);
    std::string err;
    auto c = LiveCapture::open(b.interface, "ether proto 0x88b5 or vlan", true, &err);
    ASSERT_TRUE(c.ok()) << err;
    capture.emplace(std::move(c).value());
  }

  const Bytes ab = test_frame(b.mac, a.mac, kEtherTypeLocalExperimental1, "frame from a to b");
  ASSERT_TRUE(pa.send(ab).ok()) << errno_text(pa.last_errno());
  auto got = receive_frame(pb, [](const Bytes&) { return true; });
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(to_hex(*got), to_hex(ab));
  // The sender's own socket does not see its frame come back.
  Bytes buf(2048);
  auto echo = pa.receive(buf);
  ASSERT_FALSE(echo.ok());
  EXPECT_EQ(echo.error(), IoError::kWouldBlock);

  const Bytes ba = test_frame(a.mac, b.mac, kEtherTypeLocalExperimental1, "reply from b to a");
  ASSERT_TRUE(pb.send(ba).ok());
  auto reply = receive_frame(pa, [](const Bytes&) { return true; });
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(to_hex(*reply), to_hex(ba));

  // A C-tagged frame arrives with its tag in place even when the kernel
  // offloads it into metadata (PCP 5, VID 100).
  Bytes tagged = test_frame(b.mac, a.mac, kEtherTypeCTag, "");
  tagged.resize(kEthernetHeaderSize);
  tagged.insert(tagged.end(), {0xA0, 0x64, 0x88, 0xB5});
  const std::string body = "tagged frame body, long enough to need no padding";
  tagged.insert(tagged.end(), body.begin(), body.end());
  ASSERT_TRUE(pa.send(tagged).ok());
  auto t_got = receive_frame(pb_all, [](const Bytes& f) { return f.size() > 16 && load_be16(f.data() + 12) == kEtherTypeCTag; });
  ASSERT_TRUE(t_got.has_value());
  EXPECT_EQ(to_hex(*t_got), to_hex(tagged));
  auto eth = parse_ethernet(*t_got);
  ASSERT_TRUE(eth.ok());
  ASSERT_EQ(eth->header.tag_count, 1);
  EXPECT_EQ(eth->header.tags[0].pcp, 5);
  EXPECT_EQ(eth->header.tags[0].vid, 100);

  // The live capture on B's veth saw the frames in both directions; write it
  // as a pcap and read it back.
  FrameLog log;
  const std::string path = ::testing::TempDir() + "layersec_netns_" + std::to_string(::getpid()) + ".pcap";
  {
    auto w = PcapWriter::open(path);
    ASSERT_TRUE(w.ok());
    struct Both final : FrameRecorder {
      Both(FrameRecorder& x, FrameRecorder& y) : a(x), b(y) {}
      void record(TimePoint t, ByteSpan f) override {
        a.record(t, f);
        b.record(t, f);
      }
      FrameRecorder& a;
      FrameRecorder& b;
    } both(*w, log);
    for (int i = 0; i < 100 && log.frames.size() < 3; ++i) {
      if (!readable(capture->fd())) break;
      capture->poll(both);
    }
  }
  ASSERT_GE(log.frames.size(), 3u);
  EXPECT_EQ(to_hex(log.frames[0]), to_hex(ab));
  EXPECT_EQ(to_hex(log.frames[1]), to_hex(ba));
  auto r = PcapReader::open(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->read_all().size(), log.frames.size());
  std::remove(path.c_str());
}

TEST(NetnsTest, TapDeviceReadWrite) {
  REQUIRE_NETNS();
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) GTEST_SKIP() << "/dev/net/tun is not available";
  auto t = NetnsTopology::pair("lsnt");
  const std::string ns = t.node(0).netns;
  const MacAddress tap_mac{{0x02, 0x00, 0x00, 0x88, 0x00, 0x01}};
  const MacAddress peer_mac{{0x02, 0x00, 0x00, 0x88, 0x00, 0x02}};
  const Ipv4Address tap_ip = Ipv4Address::from_octets(10, 88, 0, 1);
  const Ipv4Address peer_ip = Ipv4Address::from_octets(10, 88, 0, 2);
  std::optional<TapDevice> tap;
  {
    NetnsScope scope(ns);
    int err = 0;
    auto d = TapDevice::open("lstap%d", true, &err);
    ASSERT_TRUE(d.ok()) << errno_text(err);
    tap.emplace(std::move(d).value());
  }
  EXPECT_EQ(tap->name().rfind("lstap", 0), 0u);
  {
    // Configure the TAP through the ioctl helpers, inside its namespace.
    NetnsScope scope(ns);
    ASSERT_TRUE(set_interface_mac(tap->name(), tap_mac).ok()) << errno_text(errno);
    ASSERT_TRUE(set_interface_mtu(tap->name(), 1468).ok()) << errno_text(errno);
    ASSERT_TRUE(set_interface_ipv4(tap->name(), tap_ip, 24).ok()) << errno_text(errno);
    auto up = interface_is_up(tap->name());
    ASSERT_TRUE(up.ok());
    EXPECT_FALSE(*up);
    ASSERT_TRUE(set_interface_up(tap->name(), true).ok()) << errno_text(errno);
    up = interface_is_up(tap->name());
    ASSERT_TRUE(up.ok());
    EXPECT_TRUE(*up);
    auto mac = interface_mac(tap->name());
    ASSERT_TRUE(mac.ok());
    EXPECT_EQ(*mac, tap_mac);
    auto mtu = interface_mtu(tap->name());
    ASSERT_TRUE(mtu.ok());
    EXPECT_EQ(*mtu, 1468);
    auto index = interface_index(tap->name());
    ASSERT_TRUE(index.ok());
    EXPECT_GT(*index, 0);
    auto missing = interface_index("nosuchif0");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error(), IoError::kBadArgument);
  }
  std::string out;
  ASSERT_EQ(run_command({"ip", "-n", ns, "neigh", "add", peer_ip.to_string(), "lladdr", peer_mac.to_string(), "dev",
                         tap->name()},
                        &out),
            0)
      << out;
  out.clear();
  ASSERT_EQ(run_command({"ip", "-n", ns, "-o", "-4", "addr", "show", "dev", tap->name()}, &out), 0);
  EXPECT_NE(out.find("10.88.0.1/24"), std::string::npos) << out;
  UdpSocket s = open_udp_in(ns, {tap_ip, 5555});

  // Kernel -> TAP: a datagram to the peer comes out as a frame we can read.
  ASSERT_TRUE(s.send_to({peer_ip, 6666}, text("out through tap")).ok());
  Bytes buf(kEthernetMaxFrameSize);
  std::optional<UdpFrameView> seen;
  Bytes frame;
  while (!seen && readable(tap->fd())) {
    auto n = tap->read(buf);
    if (!n.ok()) continue;
    frame.assign(buf.begin(), buf.begin() + static_cast<long>(*n));
    auto v = parse_udp_frame(frame);  // checksums verified
    if (v.ok() && v->udp.header.dst_port == 6666) seen = *v;
  }
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->ethernet.src, tap_mac);
  EXPECT_EQ(seen->ethernet.dst, peer_mac);
  EXPECT_EQ(seen->src(), (Ipv4Endpoint{tap_ip, 5555}));
  EXPECT_EQ(std::string(seen->payload().begin(), seen->payload().end()), "out through tap");

  // TAP -> kernel: a frame we build is received by the socket.
  UdpFrameSpec spec;
  spec.src_mac = peer_mac;
  spec.dst_mac = tap_mac;
  spec.src = {peer_ip, 6666};
  spec.dst = {tap_ip, 5555};
  auto n = build_udp_frame(spec, text("in through tap"), buf);
  ASSERT_TRUE(n.ok());
  auto w = tap->write(ByteSpan(buf.data(), *n));
  ASSERT_TRUE(w.ok()) << errno_text(tap->last_errno());
  auto got = receive_one(s);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->second, "in through tap");
  EXPECT_EQ(got->first.src, (Ipv4Endpoint{peer_ip, 6666}));
}

}  // namespace
}  // namespace layersec::net

namespace layersec::net {
namespace {

// Batched I/O over a veth: sendmmsg keeps the order and refuses a short frame
// on its own (counted, the rest still go out); recvmmsg fills the slots in
// wire order, restores an offloaded VLAN tag and flags a frame too long for
// its slot instead of delivering part of it.
// With a receive ring (ring == true) the same frames come out of the ring
// slots: same order, same tag restore, the long one kTruncated.
void check_batches(const std::string& prefix, bool ring) {
  auto t = NetnsTopology::pair(prefix);
  const NetnsNode& a = t.node(0);
  const NetnsNode& b = t.node(1);
  PacketSocket pa = open_in(a, kEtherTypeAll);
  PacketSocket pb = open_in(b, kEtherTypeAll);
  if (ring) {
    ASSERT_TRUE(pb.enable_rx_ring(16, 200).ok()) << errno_text(pb.last_errno());
    ASSERT_TRUE(pb.rx_ring());
    EXPECT_FALSE(pb.enable_rx_ring(16, 200).ok());  // one ring per socket
  }
  PacketTxBatch tx(8, 400);
  const auto add = [&](const Bytes& f) {
    auto slot = tx.next_slot();
    ASSERT_GE(slot.size(), f.size());
    std::copy(f.begin(), f.end(), slot.begin());
    tx.commit(f.size());
  };
  std::vector<Bytes> sent;
  for (int i = 0; i < 6; ++i) {
    Bytes f = test_frame(b.mac, a.mac, kEtherTypeLocalExperimental1, "batch frame " + std::to_string(i));
    if (i == 2) {
      f = test_frame(b.mac, a.mac, kEtherTypeCTag, "");
      f.resize(kEthernetHeaderSize);
      f.insert(f.end(), {0xA0, 0x64, 0x88, 0xB5});
      const std::string body = "tagged frame in the batch, long enough to need no padding";
      f.insert(f.end(), body.begin(), body.end());
    }
    if (i == 4) f.resize(300, 0x77);  // too long for the receiving slots below
    add(f);
    sent.push_back(f);
    if (i == 3) add(Bytes(10, 0xEE));  // a runt: refused on its own
  }
  EXPECT_EQ(tx.pending(), 7u);
  const BatchSendResult r = pa.send(tx);
  EXPECT_EQ(r.sent, 6u);
  EXPECT_EQ(r.failed, 1u);
  EXPECT_EQ(tx.pending(), 0u);

  PacketRxBatch rx(4, 200);
  std::vector<Bytes> got;
  std::size_t truncated = 0;
  while (got.size() + truncated < 6) {
    if (!readable(pb.fd())) break;
    auto n = pb.receive(rx);
    if (!n.ok()) continue;
    EXPECT_LE(*n, 4u);
    for (std::size_t i = 0; i < *n; ++i) {
      if (rx.status(i) == PacketRxBatch::Status::kTruncated) {
        ++truncated;
        got.emplace_back();
      } else if (rx.status(i) == PacketRxBatch::Status::kOk) {
        const auto f = rx.frame(i);
        got.emplace_back(f.begin(), f.end());
      }
    }
  }
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(truncated, 1u);
  for (std::size_t i = 0; i < 6; ++i) {
    if (i == 4) {
      EXPECT_TRUE(got[i].empty());
    } else {
      EXPECT_EQ(to_hex(got[i]), to_hex(sent[i])) << i;
    }
  }
  pb.release(rx);
  EXPECT_EQ(pb.take_rx_ring_drops(), 0u);
}

TEST(NetnsTest, PacketSocketBatchesKeepOrderAndFlagWhatTheyCannotDeliver) {
  REQUIRE_NETNS();
  check_batches("lsnb", /*ring=*/false);
}

TEST(NetnsTest, PacketSocketRxRingKeepsOrderAndFlagsWhatItCannotDeliver) {
  REQUIRE_NETNS();
  check_batches("lsnr", /*ring=*/true);
}

// The receive ring under the lower link's socket filter and when it is
// full: a frame the filter keeps only the head of arrives as that head (as
// recvmmsg gives it); frames arriving while every slot is held are dropped
// by the kernel and counted, the ones delivered stay in wire order, and the
// ring runs again once its slots are given back.
TEST(NetnsTest, PacketSocketRxRingFilterHeadsAndFullRingDropsCounted) {
  REQUIRE_NETNS();
  constexpr std::uint16_t kOtherType = 0x88B6;  // IEEE 802 local experimental 2
  auto t = NetnsTopology::pair("lsnf");
  const NetnsNode& a = t.node(0);
  const NetnsNode& b = t.node(1);
  PacketSocket pa = open_in(a, kEtherTypeAll);
  PacketSocket pb = open_in(b, kEtherTypeAll);
  LowerLinkFilterSpec spec;
  spec.unicast = b.mac;
  spec.full_types = {kEtherTypeLocalExperimental1};
  ASSERT_TRUE(pb.attach_filter(lower_link_filter(spec)).ok());
  ASSERT_TRUE(pb.enable_rx_ring(1, 400).ok()) << errno_text(pb.last_errno());
  const std::size_t slots = pb.rx_ring_slots();
  ASSERT_GE(slots, 1u);

  // One frame of another EtherType: only its first 22 octets come up.
  const Bytes other = test_frame(b.mac, a.mac, kOtherType, std::string(100, 'x'));
  ASSERT_TRUE(pa.send(other).ok());
  PacketRxBatch rx(32, 400);
  std::optional<Bytes> head;
  while (!head && readable(pb.fd())) {
    auto n = pb.receive(rx);
    if (!n.ok()) continue;
    for (std::size_t i = 0; i < *n; ++i) {
      const auto f = rx.frame(i);
      if (rx.status(i) == PacketRxBatch::Status::kOk && f.size() >= 14 &&
          load_be16(f.data() + 12) == kOtherType) {
        head = Bytes(f.begin(), f.end());
      }
    }
  }
  pb.release(rx);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(to_hex(*head), to_hex(ByteSpan(other.data(), kFilterHeaderOctets)));

  // More frames than slots while nothing is read: the surplus is dropped.
  const std::size_t total = slots + 40;
  std::size_t sent = 0;
  PacketTxBatch tx(32, 100);
  for (std::size_t i = 0; i < total; ++i) {
    const Bytes f = test_frame(b.mac, a.mac, kEtherTypeLocalExperimental1, "ring " + std::to_string(i));
    auto slot = tx.next_slot();
    std::copy(f.begin(), f.end(), slot.begin());
    tx.commit(f.size());
    if (tx.full() || i + 1 == total) sent += pa.send(tx).sent;
  }
  ASSERT_EQ(sent, total);
  // Let the veth deliver everything before reading (poll sees the first frame).
  ASSERT_TRUE(readable(pb.fd()));
  ::usleep(200'000);
  std::vector<long> order;
  const auto drain = [&] {
    // Everything sent has arrived by now: a short wait ends the drain.
    pollfd p{pb.fd(), POLLIN, 0};
    while (::poll(&p, 1, 500) == 1) {
      auto n = pb.receive(rx);
      if (!n.ok()) break;
      for (std::size_t i = 0; i < *n; ++i) {
        const auto f = rx.frame(i);
        if (rx.status(i) != PacketRxBatch::Status::kOk || f.size() < 20 ||
            load_be16(f.data() + 12) != kEtherTypeLocalExperimental1) {
          continue;
        }
        const std::string body(f.begin() + 14, f.end());
        order.push_back(std::stol(body.substr(5)));
      }
      pb.release(rx);
    }
  };
  drain();
  EXPECT_LE(order.size(), slots);
  EXPECT_LT(order.size(), total);
  for (std::size_t i = 1; i < order.size(); ++i) EXPECT_LT(order[i - 1], order[i]);
  // The next frame carries the kernel's loss flag: the drops are read then.
  const Bytes after = test_frame(b.mac, a.mac, kEtherTypeLocalExperimental1, "ring 100000");
  ASSERT_TRUE(pa.send(after).ok());
  drain();
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.back(), 100000);
  const std::uint64_t drops = pb.take_rx_ring_drops();
  EXPECT_GE(drops, 1u);
  // Every test frame was delivered or counted (other traffic on the veth,
  // e.g. IPv6 neighbour discovery, may take slots and be dropped too).
  EXPECT_GE(order.size() + drops, total + 1);
  EXPECT_EQ(pb.take_rx_ring_drops(), 0u);
}

}  // namespace
}  // namespace layersec::net
